"""Extension API: everything an extension may touch."""

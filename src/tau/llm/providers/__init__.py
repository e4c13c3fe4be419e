"""Provider adapters, each loaded lazily by the registry."""

"""Built-in tools: read, write, edit, bash, and their truncation and path rules."""

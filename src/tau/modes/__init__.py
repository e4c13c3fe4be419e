"""Run modes: print, JSON, RPC and interactive."""

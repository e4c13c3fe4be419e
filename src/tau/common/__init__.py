"""Primitives every layer may use: JSON as JavaScript writes it, JS string lengths, timestamps."""

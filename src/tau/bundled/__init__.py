"""Bundled extensions, built on the public extension API only."""

"""Models: message and event types, streaming providers, registry, cost and error classifiers."""

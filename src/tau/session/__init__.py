"""Session store: pi-compatible JSONL session trees and their projection to model messages."""

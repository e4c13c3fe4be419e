"""Agent core: the loop, the run-time session, compaction."""

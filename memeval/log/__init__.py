"""The run folder's one door: typed rows, payloads, the writer and the readers."""

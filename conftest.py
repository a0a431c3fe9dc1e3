"""Root conftest: the memeval plugin itself is loaded through its pytest11 entry point."""

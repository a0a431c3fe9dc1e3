"""One root for memeval's own exceptions, so callers can catch ours and nothing else."""


class MemevalError(Exception):
    """Something memeval was asked to do cannot be done; the message names the fix."""

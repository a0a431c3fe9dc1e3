"""One root for memeval's own exceptions, so callers can catch ours and nothing else."""

# How a model answer that does not fit the asked-for JSON shape is reported, so the
# structured-output failure rate can be counted from recorded errors.
INVALID_OUTPUT = "invalid output"


class MemevalError(Exception):
    """Something memeval was asked to do cannot be done; the message names the fix."""


# A model call the door refused because the run is stopping (a signal): the turn it
# belonged to is dropped and played again on resume, never written as an error.
STOPPED_CALL = "StopRequested: the run is stopping"

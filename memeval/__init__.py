"""memeval: measure how an agent's long-term memory is re-injected into its context."""

from memeval.errors import MemevalError

__version__ = "0.1.0"
__all__ = ["MemevalError", "__version__"]

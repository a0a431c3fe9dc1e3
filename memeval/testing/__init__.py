"""Test helpers users can use too: a loopback Messages API and a deterministic keyword model."""

from memeval.testing.fake_server import FakeMessagesServer, Fault, RecordedRequest
from memeval.testing.keyword_model import keyword_model

__all__ = ["FakeMessagesServer", "Fault", "RecordedRequest", "keyword_model"]

"""A sketch of a cheaper stateful selector, to size a proposed fix (not shipped).

The shipped stateful selector restates the whole manifest whenever it changed, and
it changes on nearly every turn (surfaced memories leave it), so the conversation
grows by a manifest a turn and costs more than stateless calls. This variant:
- tells the model which lines left the manifest instead of restating it, when the
  new manifest is the old one minus some lines (restating otherwise);
- moves the cache breakpoint to the newest user turn, so the whole history before
  it is read from the prompt cache, keeping at most two breakpoints.
"""

from __future__ import annotations

import copy
from typing import Any

from memeval.selectors.base import SelectionRequest
from memeval.selectors.claude import CACHE_CONTROL, ClaudeSelector, tools_suffix


def _without_breakpoints(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """History with only the manifest's (first) breakpoint kept."""
    out = copy.deepcopy(messages)
    for index, message in enumerate(out):
        content = message.get("content")
        if isinstance(content, list):
            for number, block in enumerate(content):
                if (index, number) != (0, 0):
                    block.pop("cache_control", None)
    return out


class DeltaStatefulSelector(ClaudeSelector):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(stateful=True, name="claude?stateful=1 (delta sketch)", **kwargs)

    def _stateful_messages(self, request: SelectionRequest) -> list[dict[str, Any]]:
        conversation = self._conversations.get(self._key(request))
        if conversation is None:
            return super()._stateful_messages(request)
        query = f"Query: {request.query}{tools_suffix(request.recent_tools)}"
        old = conversation.manifest.split("\n")
        new = request.manifest.split("\n")
        if set(new) <= set(old):
            gone = [line for line in old if line not in set(new)]
            text = (f"No longer available:\n{chr(10).join(gone)}\n\n{query}" if gone
                    else query)
        else:
            text = f"{query}\n\nAvailable memories:\n{request.manifest}"
        last = {"role": "user",
                "content": [{"type": "text", "text": text, "cache_control": CACHE_CONTROL}]}
        return [*_without_breakpoints(conversation.messages), last]

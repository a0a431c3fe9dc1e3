"""Phase 2 end to end: a Session runs recall over the turns of one conversation.

Public surface: `Session`, its `TurnRecord` (and the records inside it), the
compatibility switches `Compat`, agent definitions and tool events.
"""

from memeval.session.compat import Compat
from memeval.session.records import (
    DROP_REASONS,
    SKIP_REASONS,
    DirSearch,
    DroppedName,
    PickedMemory,
    SurfacedRecord,
    TurnRecord,
)
from memeval.session.scope import (
    AgentDefinition,
    AgentMention,
    extract_agent_mentions,
    resolve_mentions,
)
from memeval.session.session import (
    MAX_SURFACED_PER_TURN,
    ScanStore,
    Session,
    memory_attachment_entry,
    render_system_reminder,
)
from memeval.session.tools import ToolEvent, recent_successful_tools

__all__ = [
    "DROP_REASONS",
    "MAX_SURFACED_PER_TURN",
    "SKIP_REASONS",
    "AgentDefinition",
    "AgentMention",
    "Compat",
    "DirSearch",
    "DroppedName",
    "PickedMemory",
    "ScanStore",
    "Session",
    "SurfacedRecord",
    "ToolEvent",
    "TurnRecord",
    "extract_agent_mentions",
    "memory_attachment_entry",
    "recent_successful_tools",
    "render_system_reminder",
    "resolve_mentions",
]

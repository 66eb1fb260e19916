"""The profiler for coding agents: ``torch-tb-profiler mcp LOGDIR``, a read-only Model Context Protocol
server over stdio (``server``) whose tools answer compact JSON with unit-suffixed keys (``queries``: the
same figures as ``summary --json`` and the HTTP routes). docs/agents.md."""

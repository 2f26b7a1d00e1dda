"""A user's whole memory as one portable JSONL file (docs/portable.md): ``export`` writes it, ``load`` reads it
back under the same or another user id, ``importers`` turn other tools' memories (a LangGraph store dump, mem0,
LangMem) into conversation the pipeline ingests."""

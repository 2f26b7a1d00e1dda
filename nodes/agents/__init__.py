"""Agents' memory (PIANO, issue 48): the rules as pure functions (importance, capacity, decay, scoring, consolidation, prompt) and the API."""

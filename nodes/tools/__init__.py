"""Tools a model can call (A2): deliberate recall of a user's memory, and opening what it points at."""

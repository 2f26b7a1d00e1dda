"""Knowledge bases (L5 ``kb:*``, S3): documents chunked, cut into passages, searched, read back.

``add`` puts files in a KB, ``search`` finds the passage that answers (``search_kb``) and reads a chunk
back with its neighbours (``read_kb``), ``manage`` lists and removes KBs.
"""

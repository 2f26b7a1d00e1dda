"""Reading calendar expressions: the names of months and weekdays (``names``) and dated stamps such as a
conversation session's date-time (``stamps``), shared by ingest, knowledge, recall and the bench loader."""

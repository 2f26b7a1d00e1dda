"""Every user table of the archive is either carried by a portable export or named as left out with its reason
(nodes.portable.kinds), so a table another capability adds is a decision, not a silent loss; the schema names
exactly the kinds an export writes."""

from __future__ import annotations

from lumina_memory.nodes.portable.kinds import LEFT_OUT_TABLES, PROFILE, TABLE_OF_KIND
from lumina_memory.nodes.portable.read import schema
from lumina_memory.nodes.portable.tables import archive_tables


def test_every_user_table_of_the_archive_is_exported_or_left_out_by_name(memory):
    tables = set(archive_tables(memory.services.stores.archive))
    assert set(TABLE_OF_KIND.values()) <= tables  # every exported table exists in a fresh memory
    undecided = tables - set(TABLE_OF_KIND.values()) - set(LEFT_OUT_TABLES)
    assert undecided == set(), f"add these tables to nodes/portable/kinds.py (exported, or left out and why): {undecided}"


def test_the_schema_names_the_kinds_an_export_writes():
    record = schema()["$defs"]["record"]
    assert set(record["properties"]["kind"]["enum"]) == {*TABLE_OF_KIND, PROFILE}
    assert {rule["if"]["properties"]["kind"]["const"] for rule in record["allOf"]} == {*TABLE_OF_KIND, PROFILE}

"""No erased id in any byte of the ladybug graph files, not even in the engine's unused page space.

ladybug writes its header, catalog and metadata pages from heap buffers it does not clear, so the unused end of
each page carries whatever the process freed before: a query parameter such as a user id it just counted or
deleted. A process that erased a user and rewrote the file then wrote the id back at its next checkpoint or close
(the header page is rewritten at every close). The adapter has the C allocator fill every block it hands out
(stores.graph_ladybug.wipe_freed_memory); this test runs the erasure cycle in a fresh interpreter, as the CLI does,
and scans every file of the graph path after each close.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CYCLES = 8

CHILD = textwrap.dedent("""
    import json, pathlib, sys
    from lumina_memory.stores import ids
    from lumina_memory.stores.graph_ladybug import LadybugGraph
    root, cycles = pathlib.Path(sys.argv[1]), int(sys.argv[2])
    found = {}
    for k in range(cycles):
        gone = f"zq{k:04d}x"  # a token no engine structure holds by chance
        graph = LadybugGraph(root / "graph")
        graph.upsert_segment("keeper", ids.segment_id("keeper", f"t{k}"), ["lumina"], [f"kept{k}"], f"kept {k}", k, 0.5)
        for i in range(3):
            graph.upsert_segment(gone, ids.segment_id(gone, f"t{i}"), ["lumina"], [f"c{i}"], f"text {i}", i, 0.5)
        graph.counts(gone)
        graph.delete_user(gone)
        graph.rewrite()
        graph.counts(gone)  # as the erasure's check that nothing is left does
        # Any read that handled the id will do; many copies of it in freed buffers make a leak show every time.
        graph._read("UNWIND $ids AS i RETURN count(i) AS n", {"ids": [gone] * 20000})
        graph.close()
        hits = [p.name for p in root.iterdir() if p.is_file() and gone.encode() in p.read_bytes()]
        if hits:
            found[gone] = hits
    print(json.dumps(found))
""")


def test_no_erased_id_reaches_any_page_of_the_graph_file_after_erase_rewrite_and_close(tmp_path):
    child = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), str(CYCLES)], cwd=REPO, capture_output=True,
                           text=True, timeout=600, env={**os.environ})
    assert child.returncode == 0, child.stderr[-3000:]
    assert json.loads(child.stdout.strip().splitlines()[-1]) == {}
    assert b"kept" in (tmp_path / "graph").read_bytes()  # the scan does see what is there

"""The UserDataPlace side of a server-mode table whose rows each belong to one user (``user_id`` column): count,
erase, and the rewrite that makes deleted rows' bytes leave the table's files."""

from __future__ import annotations

from pathlib import Path


class UserRowsPlace:
    """Mixed into a class that sets ``db`` (a PostgresConnection) and ``table``."""

    db = None
    table = ""

    def count(self, user_id: str) -> int:
        with self.db.read() as con:
            return int(con.execute(f"SELECT count(*) FROM {self.table} WHERE user_id = ?", [user_id]).fetchone()[0])

    def erase(self, user_id: str) -> int:
        with self.db.tx() as con:
            return len(con.execute(f"DELETE FROM {self.table} WHERE user_id = ? RETURNING user_id",
                                   [user_id]).fetchall())

    def scrub(self) -> None:
        """Deleted rows' tuples leave the table's files (VACUUM FULL; see PostgresConnection.rewrite)."""
        self.db.rewrite([self.table])

    def raw_paths(self) -> list[Path]:
        return []  # on the server: nothing of it is a file here

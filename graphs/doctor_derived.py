"""doctor's derivation checks: does every derived tier hold what the archive says it should, in total and
per user (from what the engine checks saw)?"""

from __future__ import annotations

from .doctor_check import FAIL, OK, SKIP, WARN, Check, DoctorState
from .tier_match import mismatches, suspicious


class DerivationChecks(DoctorState):
    # --- derivations -----------------------------------------------------------------------------
    def derivation_checks(self) -> list[Check]:
        """Does every derived tier hold what the archive says it should? Pending outbox rows are work
        a crash or an outage left owed (completed when the data dir is next opened, or when the store is
        back); a tier holding fewer segments or turns than the archive, with nothing owed, lost them."""
        seen = self.seen
        if "archive_segments" not in seen:
            return [Check("derivations", "complete", SKIP, "archive not readable now (see archive row)")]
        out: list[Check] = []
        rows = seen.get("outbox") or []
        if rows:
            owed: dict[str, int] = {}
            for _user, _segment, stages in rows:
                for stage in stages:
                    owed[stage] = owed.get(stage, 0) + 1
            users = len({r[0] for r in rows})
            out.append(Check("derivations", "outbox", WARN,
                             f"{len(rows)} archived segment(s) of {users} user(s) still owe derived writes "
                             f"({', '.join(f'{k} {v}' for k, v in sorted(owed.items()))}): a crash or an outage "
                             "left them; they complete when the data dir is next opened (any command) or the store is back"))
        else:
            out.append(Check("derivations", "outbox", OK, "no derived writes owed"))
        archived, pending = int(seen["archive_segments"]), len(rows)
        short = []
        if "graph_segments" in seen and int(seen["graph_segments"]) + pending < archived:
            short.append(f"the graph holds {seen['graph_segments']} of {archived} archived segments")
        if "points:turns" in seen and int(seen["points:turns"]) < int(seen["archive_turns"]) and not pending:
            short.append(f"the turn vectors hold {seen['points:turns']} of {seen['archive_turns']} archived turns")
        if short:
            out.append(Check("derivations", "complete", FAIL, "; ".join(short) + " with nothing owed (a crash "
                             "before the outbox existed): rebuild them from the archive with "
                             "`lumina-memory recover --user ID --rederive` for each user"))
        elif "midterm_segments" in seen and int(seen["midterm_segments"]) < int(seen.get("archived_within_ttl", 0)):
            out.append(Check("derivations", "mid-term", WARN,
                             f"mid-term holds {seen['midterm_segments']} records, the archive has "
                             f"{seen['archived_within_ttl']} segments within the TTL: restored from the archive "
                             "when the data dir is next opened"))
        else:
            out.append(Check("derivations", "complete", OK, "every derived tier holds what the archive says"))
        return out

    def tier_match_checks(self) -> list[Check]:
        """Per user, does each derived tier hold what the archive says (graphs.tier_match)? Catches what the
        totals hide: one user's points lost while another's linger after an erasure."""
        archive = self.seen.get("archive_per_user")
        if archive is None:
            return [Check("derivations", "per user", SKIP, "archive not readable now (see archive row)")]
        names = {"per_user:segments": "segment points", "per_user:turns": "turn points",
                 "per_user:knowledge": "knowledge points", "per_user:graph": "graph segments"}
        tiers = {tier: self.seen[key] for key, tier in names.items() if key in self.seen}
        bad = mismatches(archive, tiers)  # type: ignore[arg-type]
        doubtful = suspicious(archive, tiers)  # type: ignore[arg-type]
        if doubtful and not bad:
            return [Check("derivations", "per user", WARN, "; ".join(doubtful))]
        if bad:
            return [Check("derivations", "per user", FAIL, "; ".join(bad + doubtful) + ": a crash or an interrupted rewrite "
                          "lost or left data; `lumina-memory recover --user ID --rederive` rebuilds a user's tiers "
                          "from the archive, `erase` again removes an erased user's rest")]
        counted = ", ".join(sorted(tiers)) or "no derived tier readable"
        return [Check("derivations", "per user", OK, f"{len(archive.users())} user(s): {counted} match the archive")]

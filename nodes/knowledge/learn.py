"""Knowledge from episodes (A6, A7) on the stores: a closed segment's turns → grounded items → history.

Runs inside the archive transaction that stores the segment (nodes.archive_to_duckdb), like encoding: the
knowledge a segment taught commits with it, and a replay of the same segment changes nothing (item ids are
deterministic and ``resolve`` answers "unchanged" for what is already known). The offline extractor always
runs; the model path (when one is configured) adds to it in a later step, never replaces it.

After a segment's items are resolved, a sentence of it that speaks of a single-valued attribute with a change
but that no rule read puts the user's current value of it under review (nodes.knowledge.unread): a stale fact is
not left standing as plain current because its update was worded in a way no rule reads.

Then the links between facts (F6, nodes.knowledge.dependents): each new routine or plan records the current
facts it rests on (``derived_from``; with a model, the model is asked too), and the current facts resting on a
fact the segment superseded are put under review with why.

Items carry the episodes they came from (``episode_ids``: segment ids, the lifecycle's memory ids); a merge
gives the surviving item the new episode too.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..nli import nli_cascade
from .dependents import rests_on, under_review
from .extract import extract_items
from .ground import validate_items
from .models import KnowledgeItem, as_source_turn
from .params import KnowledgeParams
from .resolve import resolve
from .unread import needs_review, review_items

log = logging.getLogger("lumina.knowledge")

_STORE_ONLY = ("user_id", "episode_ids", "updated_at", "forgotten_at")
_NAMED = ("pet", "sibling", "parent", "child", "partner", "friend")


def params_of(services) -> KnowledgeParams:
    return getattr(services.settings, "knowledge", None) or KnowledgeParams()


def item_of(row: Mapping[str, Any]) -> KnowledgeItem:
    """A stored row as the model (store-only columns dropped; NULL text fields as the model's defaults)."""
    fields = {k: v for k, v in row.items() if k not in _STORE_ONLY and v is not None}
    for key in ("source_turn_ids", "source_ids", "derived_from", "contradicts"):
        fields[key] = tuple(fields.get(key) or ())
    return KnowledgeItem(**fields)


def row_of(item: KnowledgeItem, user_id: str, episode_ids: Iterable[str], now: float) -> dict[str, Any]:
    return {**item.model_dump(), "user_id": user_id, "episode_ids": list(dict.fromkeys(episode_ids)), "updated_at": now}


def known_names(rows: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, str]]:
    """Names of people and pets the user has told about (モカ → (pet, 猫)), so a later 「モカは3歳」 knows whom."""
    return {r["value"]: (r["attribute"], r["detail"] or "") for r in rows
            if r["attribute"] in _NAMED and r["subject"] == "user" and r["polarity"] == "positive"}


def learn_segments(services, user_id: str, segments: Sequence[tuple[Any, Sequence[Mapping[str, Any]]]],
                   now: float | None = None) -> dict[str, Any]:
    """(SegmentRecord, its turns) per closed segment → the user's knowledge table. Returns counts by action
    (add, supersede, merge, coexist, unchanged), ``rejected`` (ungrounded extractions) and ``path`` (offline,
    offline+llm, or offline after a model failure)."""
    table = services.stores.archive.knowledge
    params = params_of(services)
    now = time.time() if now is None else now
    rows = {r["item_id"]: r for r in table.items(user_id, history=True)}
    counts: Counter = Counter()
    written: dict[str, dict[str, Any]] = {}
    extractor = model_extractor(services)
    path = "offline" if extractor is None else "offline+llm"
    # A6's cascade: NLI decides what it is sure of, the model's review the rest (nodes.nli).
    reviewer = None if extractor is None else nli_cascade(services.chat_model, extractor.review, params)
    for record, turns in segments:
        items = extract_items(turns, params, known_names=known_names(rows.values()))
        if extractor is not None:
            try:
                seen = {i.item_id for i in items}
                items += [i for i in extractor.extract(turns) if i.item_id not in seen]
            except Exception as exc:  # noqa: BLE001 - the offline items stand; said in the log and the report
                reason = f"{type(exc).__name__}: {exc}"[:200]
                log.warning("knowledge model failed (%s); this segment's knowledge is the offline extractor's", reason)
                path = f"offline (model failed: {reason})"
        checked = validate_items(items, turns, params, reviewer=reviewer)
        counts["rejected"] += len(checked.rejected)
        for rejection in checked.rejected:
            log.info("knowledge item rejected (ungrounded) user=%s reason=%s", user_id, rejection.reason)
        learnt: list[str] = []
        restated: dict[str, float] = {}
        changed: dict[str, tuple[KnowledgeItem, KnowledgeItem]] = {}
        for item in sorted(checked.kept, key=lambda i: i.said_at):
            existing = [item_of(r) for r in rows.values()]
            step = resolve(existing, item, params)
            if extractor is not None and step.action == "add":
                step = _ask_the_model(extractor, existing, item, params, step)
            counts[step.action] += 1
            if step.action == "merge":  # a restatement: what it rests on now is asked again, as of now
                restated.update({u.item_id: item.said_at for u in step.updated})
            elif step.item is not None:
                learnt.append(step.item.item_id)
                changed.update({u.item_id: (u, step.item) for u in step.updated if u.status == "superseded"})
            for updated in step.updated:
                episodes = rows[updated.item_id]["episode_ids"]
                if step.action == "merge":
                    episodes = [*episodes, record.segment_id]
                written[updated.item_id] = rows[updated.item_id] = row_of(updated, user_id, episodes, now)
            if step.item is not None:
                written[step.item.item_id] = rows[step.item.item_id] = row_of(step.item, user_id, [record.segment_id], now)
        for item in _review(rows, turns, checked.kept, params):
            counts["review"] += 1
            written[item.item_id] = rows[item.item_id] = row_of(item, user_id, rows[item.item_id]["episode_ids"], now)
        for item in _dependencies(rows, learnt, restated, changed, turns, params, extractor):
            counts["dependent_review" if needs_review(item) and item.item_id not in learnt else "derived_from"] += 1
            written[item.item_id] = rows[item.item_id] = row_of(item, user_id, rows[item.item_id]["episode_ids"], now)
    table.upsert(list(written.values()))
    if written:
        log.info("knowledge user=%s path=%s %s", user_id, path, dict(counts))
    stages = dict(getattr(reviewer, "stages", {}))
    return {**counts, "path": path, **({"validation": stages} if stages else {})}


def _review(rows: Mapping[str, Mapping[str, Any]], turns, kept: Sequence[KnowledgeItem],
            params: KnowledgeParams) -> list[KnowledgeItem]:
    """The user's current facts that a sentence of ``turns`` no rule read may have made stale (nodes.knowledge.unread)."""
    live = [item_of(r) for r in rows.values() if r["subject"] == "user" and r["status"] in ("current", "coexisting")
            and r["valid_to"] is None]
    return review_items(live, turns, kept, params)


def _dependencies(rows: Mapping[str, Mapping[str, Any]], learnt: Sequence[str], restated: Mapping[str, float],
                  changed: Mapping[str, tuple[KnowledgeItem, KnowledgeItem]], turns,
                  params: KnowledgeParams, extractor=None) -> list[KnowledgeItem]:
    """F6 after a segment: what its new facts, and the facts it restated (item id → when), rest on
    (``derived_from``: the rules', and with a model the model's too), then the current facts resting on a fact
    it changed, put under review (nodes.knowledge.dependents). Only items that change are returned."""
    said = {**dict.fromkeys(learnt), **restated}
    mine = {i: item_of(rows[i]) for i in said if rows[i]["status"] in ("current", "coexisting")}
    anchors = [item_of(r) for r in rows.values() if r["subject"] == "user" and r["attribute"] in params.dependency_markers
               and r["valid_to"] is None and r["status"] in ("current", "coexisting")]
    out: dict[str, KnowledgeItem] = {}
    for item_id, item in mine.items():
        if said[item_id] is not None:  # restated: the facts said before the restatement count
            item = item.model_copy(update={"said_at": said[item_id]})
        derived = rests_on(item, anchors, params)
        if extractor is not None:
            derived = _ask_what_it_rests_on(extractor, item, anchors, derived, params)
        if derived != item.derived_from:
            out[item_id] = item_of(rows[item_id]).model_copy(update={"derived_from": derived})
    if changed:
        said_with = {str(as_source_turn(t)["turn_id"]) for t in turns}
        resting = [out.get(r["item_id"]) or item_of(r) for r in rows.values() if r.get("derived_from")
                   and r["valid_to"] is None and r["status"] in ("current", "coexisting")]
        out.update({i.item_id: i for i in under_review(resting, changed, said_with)})
    return list(out.values())


def _ask_what_it_rests_on(extractor, item: KnowledgeItem, anchors: Sequence[KnowledgeItem],
                          derived: tuple[str, ...], params: KnowledgeParams) -> tuple[str, ...]:
    """The model's answer added to the rules' for a new routine or plan of the user, asked about the current facts
    others may rest on said before it. A failed call keeps the rules' answer, logged."""
    if item.subject != "user" or item.attribute not in params.dependent_attributes or item.polarity != "positive":
        return derived
    facts = [a for a in anchors if a.item_id != item.item_id and a.said_at <= item.said_at]
    if not facts:
        return derived
    try:
        return tuple(dict.fromkeys((*derived, *extractor.rests_on(item, facts))))
    except Exception as exc:  # noqa: BLE001 - the rules' answer stands, loudly
        log.warning("knowledge model failed on what %s rests on (%s); the rules' answer stands", item.item_id,
                    f"{type(exc).__name__}: {exc}"[:200])
        return derived


def _ask_the_model(extractor, existing: list[KnowledgeItem], item: KnowledgeItem, params: KnowledgeParams, step):
    """A7: the case the rules cannot decide — a new value of an attribute that accumulates, beside current values
    of it (a new pet: another pet, or the one that replaced it?). The model judges; "supersede" re-resolves the
    item as if the attribute held one value at a time. A failed call keeps the rules' answer (coexist)."""
    if params.is_single(item.attribute) or item.polarity != "positive":
        return step
    rivals = [e for e in existing if e.subject == item.subject and e.attribute == item.attribute and e.is_current
              and e.polarity == "positive" and e.slot != item.slot]
    if not rivals or extractor.judge(rivals, item) != "supersede":
        return step
    single = params.model_copy(update={"policy": {**params.policy, item.attribute: "single"}})
    return resolve(existing, item, single)


def model_extractor(services):
    """The model's extractor when a chat model is configured (built once per Services), else None."""
    if not hasattr(services, "paths") or services.paths.get("summary") != "llm":
        return None
    extractor = services.built.get("knowledge_extractor")
    if extractor is None:
        from .llm_extract import ModelExtractor

        extractor = ModelExtractor(services.chat_model, params_of(services))
        services.built["knowledge_extractor"] = extractor
        log.info("knowledge extraction path=offline+llm")
    return extractor

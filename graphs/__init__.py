"""Lumina Memory's graphs and their entry points (CLI, LangGraph server, notebooks)."""

import logging


def _finish_interrupted_erasures(services) -> None:
    # Cheap when nothing is pending (a stat, or one row in server mode); graphs.erase and its imports load only
    # when something is.
    from lumina_memory.stores.erasure import erasures_in_progress
    from lumina_memory.stores.shared_state import shared_state_of

    if erasures_in_progress(shared_state_of(services)):
        from lumina_memory.stores.errors import StoreUnavailable

        from .erase import finish_interrupted_erasures

        try:
            finish_interrupted_erasures(services)
        except StoreUnavailable as exc:  # the user stays refused (input_guard) until a later open finishes it
            logging.getLogger("lumina.erase").warning("interrupted erasure still unfinished: %s", exc)


def _register_startup_hooks() -> None:
    from lumina_memory.nodes.services import STARTUP_HOOKS

    if _finish_interrupted_erasures not in STARTUP_HOOKS:
        STARTUP_HOOKS.append(_finish_interrupted_erasures)


_register_startup_hooks()

"""The settings sit above the stores and refuse what they do not know.

- ``lumina_memory.stores.settings`` imports nothing from ``nodes/`` (the parameter models, the cast and the
  knowledge word lists are settings data; nodes import them from there, one definition each).
- A ``LUMINA_*`` variable that names no setting (a misspelling, a removed setting), in the environment or the
  ``.env`` file, and a keyword ``LuminaSettings`` does not know, are errors naming them: never silently ignored.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from lumina_memory.stores.settings import LuminaSettings
from lumina_memory.stores.settings_env import REMOVED, UnknownSetting
from lumina_memory.stores.settings_lifecycle import LifecycleParams


def test_the_settings_import_nothing_from_nodes():
    code = ("import json, sys; import lumina_memory.stores.settings; "
            "print(json.dumps(sorted(m for m in sys.modules if m.startswith('lumina_memory.'))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert "lumina_memory.stores.settings" in loaded
    assert [m for m in loaded if not m.startswith("lumina_memory.stores")] == []


def test_nodes_use_the_one_definition_in_the_settings_layer():
    from lumina_memory.nodes import characters
    from lumina_memory.nodes.knowledge import models, params as knowledge_params, procedure_models
    from lumina_memory.nodes.lifecycle import params as lifecycle_params
    from lumina_memory.stores import settings_characters, settings_knowledge, settings_lifecycle, settings_procedures

    assert characters.CAST is settings_characters.CAST and characters.CHARACTERS is settings_characters.CHARACTERS
    assert knowledge_params.KnowledgeParams is settings_knowledge.KnowledgeParams
    assert models.ATTRIBUTES is settings_knowledge.ATTRIBUTES
    assert procedure_models.ProcedureParams is settings_procedures.ProcedureParams
    assert lifecycle_params.LifecycleParams is settings_lifecycle.LifecycleParams is LifecycleParams


@pytest.mark.parametrize("variable", sorted(REMOVED))
def test_a_removed_setting_in_the_environment_is_an_error_naming_it(monkeypatch, variable):
    monkeypatch.setenv(variable, "5")
    with pytest.raises(UnknownSetting, match=variable):
        LuminaSettings()


@pytest.mark.parametrize("variable, suggestion", [
    ("LUMINA_RECALL_TURN_CONTEN", "LUMINA_RECALL_TURN_CONTENT"),
    ("LUMINA_LIFECYCLE__MAX_PROTECTED_MEMORY", "LUMINA_LIFECYCLE__MAX_PROTECTED_MEMORIES"),
    ("lumina_recall_mmrr", "LUMINA_RECALL_MMR"),
])
def test_a_misspelt_variable_is_an_error_with_the_setting_meant(monkeypatch, variable, suggestion):
    monkeypatch.setenv(variable, "false")
    with pytest.raises(UnknownSetting, match=f"{variable}.*Did you mean {suggestion}"):
        LuminaSettings()


def test_a_misspelt_variable_in_the_env_file_is_an_error_and_other_tools_variables_are_not(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("LANGSMITH_TRACING=false\nLUMINA_RECALL_MMR=false\n", encoding="utf-8")
    assert LuminaSettings().recall_mmr is False
    (tmp_path / ".env").write_text("LUMINA_RECAL_MMR=false\n", encoding="utf-8")
    with pytest.raises(UnknownSetting, match="LUMINA_RECAL_MMR"):
        LuminaSettings()


def test_an_unknown_keyword_is_an_error_naming_it():
    with pytest.raises(UnknownSetting, match="archive_retention_days"):
        LuminaSettings(archive_retention_days=30)
    with pytest.raises(UnknownSetting, match="recall_mmrr.*recall_mmr"):
        LuminaSettings(recall_mmrr=False)
    assert LuminaSettings(REDIS_URL=None, recall_mmr=False).recall_mmr is False  # names and aliases both work


def test_logging_variables_read_outside_the_settings_are_known(monkeypatch):
    monkeypatch.setenv("LUMINA_LOG_LEVEL", "INFO")
    monkeypatch.setenv("LUMINA_RECALL_MMR", "false")
    assert LuminaSettings().recall_mmr is False


def test_the_notes_retrieval_cut_offs_read_as_written():
    # F7's top_k and relevance_threshold are parameters (nodes.retrieval.resonance.within_limits), off by default.
    read = LifecycleParams.from_notes_config({"retrieval": {"top_k": 8, "relevance_threshold": 5.0}})
    assert (read.top_k, read.relevance_threshold) == (8, 5.0)
    assert (LifecycleParams().top_k, LifecycleParams().relevance_threshold) == (0, 0.0)
    with pytest.raises(ValueError, match="unknown setting retrieval.top_n"):
        LifecycleParams.from_notes_config({"retrieval": {"top_n": 8}})

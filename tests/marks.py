"""Which tests are ``slow``: left out of the edit loop's fast run (``python -m pytest -q -m "not slow"``,
tests/README.md) and run by the whole suite.

Slow are the tests that start a server (``langgraph dev``, SeaweedFS, FalkorDB over Bolt, a Redis cluster), run the
CLI in subprocesses (each loads the embedder and opens every engine), kill processes (kill -9 trials), build a
wheel or a venv, run the notebooks or a benchmark harness, generate hostile input by the hundred, or run
LangGraph's own store suites — and any other test measured at over about a second on the 2-core machine. A test
can also say so itself with ``@pytest.mark.slow``; the lists below hold the ones chosen by measurement.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# Whole files: most of their tests are slow, or all share a slow module fixture.
SLOW_FILES = frozenset({
    # servers
    "test_langgraph_server.py", "test_server_graphs.py", "test_thread_owner_server.py", "test_erase_server.py",
    "test_graph_server_frozen.py", "test_graph_server_outage.py", "test_redis_cluster.py", "test_s3_backup.py",
    "test_cold_turns_s3.py", "test_production_restore.py", "test_lifecycle_production.py", "test_knowledge_tiers.py",
    "test_maintenance.py", "test_doctor.py", "test_place_backends.py",
    # the CLI in subprocesses
    "test_cli.py", "test_cli_memories.py", "test_cli_refusals.py", "test_erasure.py", "test_ingest_rejects.py",
    "test_kb_cli.py", "test_backup_erasure_reach.py", "test_rejected_input_trace.py", "test_procedures.py",
    "test_passages.py",
    # kill -9 trials and crashes
    "test_crash_recovery.py", "test_crash_resume.py", "test_crash_rewrite.py", "test_restore_resume.py",
    "test_erase_interrupted.py", "test_erase_tokens.py", "test_erase_kill_production.py", "test_journal.py",
    "test_backup_kill_production.py",
    "test_midterm_rebuild.py", "test_redis_watchdog.py", "test_embed_worker.py",
    # packaging, the README's commands
    "test_packaging.py", "test_extras.py", "test_readme_blocks.py",
    # benchmark harnesses on small sets
    "test_ablation.py", "test_bench_answer.py", "test_bench_cold_start.py", "test_bench_knowledge.py",
    "test_bench_lifecycle.py", "test_bench_locomo.py", "test_bench_locomo_lifecycle.py", "test_bench_locomo_tail.py",
    "test_bench_priming.py",
    # many examples or large ingests through every tier
    "test_hostile_hypothesis.py", "test_residue.py", "test_lifecycle_e2e.py", "test_lifecycle_store.py",
    "test_maintenance_lifecycle.py", "test_long_input.py", "test_chat_and_llm_paths.py", "test_knowledge_forgetting.py",
    "test_knowledge_retention.py", "test_idempotency_isolation.py", "test_graph_stale_heap.py", "test_kb_erase.py",
    "test_transcript_batch.py", "test_outages.py", "test_activity_log.py", "test_pipeline_e2e.py",
    "test_pii_redaction.py", "test_priming.py", "test_lifecycle_formulas.py", "test_backup_restore.py",
    "test_knowledge_consolidate.py", "test_batch_fallback.py", "test_idle_encoding.py",
    # LangGraph's own store suites (tests/upstream_store)
    "test_inmemory_suite.py", "test_sqlite_suite.py", "test_sqlite_async_suite.py", "test_sqlite_ttl_suite.py",
})

# Single tests (every parametrisation) in files that are otherwise quick.
SLOW_TESTS = frozenset({
    "test_knowledge_store.py::test_through_the_graph_recall_and_the_cli",
    "test_ingest_semantics.py::test_an_import_reports_reused_ids_missing_times_and_rows_over_the_limit",
    "test_ingest_semantics.py::test_a_time_without_an_offset_is_read_on_the_users_clock",
    "test_list_questions.py::test_recall_adds_the_channel_only_for_a_list_question_about_a_named_speaker",
    "test_list_questions.py::test_the_channel_ranks_the_askers_own_turns_for_a_list_question_in_the_first_person",
    "test_list_questions.py::test_an_assistant_answering_at_length_keeps_its_replies_in_a_first_person_question",
    "test_lifecycle_relations_encode.py::test_memories_json_lists_the_relations",
    "test_memory_tools.py::test_hostile_ids_open_nothing",
    "test_memory_tools.py::test_the_tool_loop_is_bounded_and_uses_primed_text",
    "test_memory_tools.py::test_the_respond_node_runs_the_tool_loop",
    "test_midterm_conformance.py::test_expiry",
    "test_stamped_cache.py::test_the_profile_priming_shows_is_built_once_per_write_and_forgotten_with_the_user",
    "test_lifecycle_relations_encode.py::test_relations_reach_the_graph_after_maintenance_and_go_with_the_user",
    "test_graph_conformance.py::test_many_knowledge_items_with_many_sources_in_one_call",
    "test_audit_forgery.py::test_an_append_killed_at_any_moment_leaves_a_log_that_verifies",
    "test_kb.py::test_text_markdown_and_pdf_are_added_in_chunks",  # the module fixture adds three documents on two engines
    "test_kb.py::test_search_finds_the_passage_that_answers",
    "test_kb.py::test_read_kb_joins_the_chunk_with_its_neighbours_once",
    "test_kb.py::test_adding_again_is_idempotent_and_a_changed_file_replaces_the_old",
    "test_kb.py::test_an_interrupted_add_is_never_returned_and_a_retry_completes_it",
    "test_kb.py::test_per_user_kbs_are_visible_to_their_user_only",
    "test_kb.py::test_hostile_user_ids_are_refused",
    "test_kb.py::test_hostile_kb_names_are_refused",
    "test_kb.py::test_unknown_kb_and_bad_queries_give_clear_errors",
    "test_kb.py::test_bad_files_are_refused_before_anything_is_written",
    "test_kb.py::test_removing_a_kb_takes_its_records_and_points",
    "test_memory_vector.py::test_priming_finds_a_faded_memory_by_its_level_text_the_point_keeps_its_record",
    "test_isolation_hostile.py::test_another_users_ids_are_not_found",
    "test_store_contract.py::test_callers_use_only_declared_members",
    "test_store_contract.py::test_opened_stores_are_instances_of_their_protocols",
    "test_private_files.py::test_every_file_of_a_demo_replay_is_private",
    "test_thread_owner.py::test_another_users_run_on_a_thread_is_refused_and_leaves_nothing",
    "test_thread_owner.py::test_a_thread_records_its_owner_on_the_first_run_and_the_owner_keeps_using_it",
    "test_time_pointers.py::test_hostile_text_around_a_time_opens_nothing",
    "test_time_pointers.py::test_a_long_replys_excerpt_is_headed_by_its_own_time_which_opens_the_reply_whole",
    "test_prepared_graph_reads.py::test_a_recall_after_the_services_open_compiles_no_graph_statement",
    "test_text_caches.py::test_erasing_a_user_empties_the_text_caches_and_the_registry_counts_them",
    "test_time_window_ranking.py::test_recall_puts_the_turns_of_the_time_asked_first",
    "test_kb.py::test_without_any_kb_a_search_reads_no_catalog_row_until_one_is_added",
    "test_crosslingual.py::test_recall_finds_memories_across_scripts_both_ways",
    "test_cli_help.py::test_the_installed_command_prints_it",
    "test_temporal_cues.py::test_any_question_on_any_clock_gets_a_window_or_none_and_never_an_error",
    "test_memory_tools_kb.py::test_search_a_knowledge_base_and_open_its_passage",
    "test_dedup_lookalikes.py::test_recall_keeps_the_users_fact_beside_a_friends_look_alike",
    "test_vectors_conformance.py::test_edge_optimize_builds_a_per_user_index_that_finds_what_a_scan_finds",
    "test_turn_reads.py::test_the_erasure_registry_backs_up_and_erases_the_reads",
    "test_tokenize_scripts.py::test_recall_finds_a_korean_and_an_arabic_message_by_its_words",
    "test_postings.py::test_postings_of_many_documents_are_the_ones_counted_term_by_term",
    "test_retrieval_query.py::test_an_excerpts_token_count_is_added_up_exactly",
    "test_retrieval_query.py::test_my_in_a_question_prefers_the_users_turn_to_the_assistants_look_alike",
    "test_emotion_f2.py::test_an_unreachable_openai_server_falls_back_loudly",
    "test_stamped_cache.py::test_recall_reads_the_users_tables_once_per_write",
    "test_turn_index.py::test_live_chat_tops_up_vectors_and_recalls_the_newest_segment",
    "test_audit.py::test_a_restored_log_continues_its_chain",
    "test_index_snapshot.py::test_a_process_that_starts_answers_its_first_recall_from_the_snapshot_the_flush_wrote",
    "test_audit_forgery.py::test_audit_verify_opens_no_redis_and_writes_nothing",
})


def is_slow(item: pytest.Item) -> bool:
    path = Path(str(item.path))
    if path.suffix == ".ipynb":  # the notebooks (nbmake)
        return True
    name = getattr(item, "originalname", None) or item.name.split("[", 1)[0]
    return path.name in SLOW_FILES or f"{path.name}::{name}" in SLOW_TESTS

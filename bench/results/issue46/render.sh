cd "$(dirname "$0")"
B=""
[ -f before_longreply.json ] && B="$B --before long-replies=before_longreply.json"
[ -f before_longreply_hard.json ] && B="$B --before long-replies-hard=before_longreply_hard.json"
[ -f before_multilingual.json ] && B="$B --before multilingual=before_multilingual.json"
PYTHONPATH=../../.. python -m bench.sets_report real-text-report=written_report.json real-text-dev=written_dev.json locomo-dev=locomo_dev.json long-replies=longreply.json long-replies-hard=longreply_hard.json multilingual=multilingual.json --before real-text-report=before_written_report.json --before locomo-dev=before_locomo_dev.json $B > /tmp/issue46_body.md && cat header.md /tmp/issue46_body.md > ../issue46_sets.md

#!/usr/bin/env python3
"""Give a pure-Go run result the sessions its binary could not record.

The run's binary (dev-0d26fbe) predates the machine record (commit 0d0bdb7): its ID.json files
have no "sessions". This script adds them, in the form a current wcmc writes:

    "sessions": [{"began": …, "tasks": n, "wall_seconds": s, "machine": "…", "workers": 2}]

Each session is a process that computed part of the result. With the experiment's journal (its
lines record the start of the session that ran each task, "began", and the task's end, "done"),
a session is the tasks of one "began", its time from that start to its last "done". Without a
journal (an experiment finished in one session, its journal removed when it finished), the one
session is the result's own start, task count and wall time. The machine of each session is
given by hand from the run's README (MACHINES below, by session start), because the binary did not
record it.

Usage: add_sessions.py ID.json ID.journal.jsonl [TASKS] | TASKS
(edits ID.json in place; TASKS is the experiment's task count: alone, for a result computed in
one session without its journal; after a journal, for a copy taken shortly before the experiment
finished, whose missing last tasks are the last session's, which ended at the result's end;
refuses if ID.json already has sessions, or if the sessions' time does not sum to the recorded
wall time).
"""
import datetime
import json
import re
import sys

ZEN4 = 'AMD EPYC (Zen 4; model name not recorded), 2 CPUs, linux/amd64, BLAS wcmc dgemm, AVX-512 (12×16)'
CASCADE = 'Intel(R) Xeon(R) Processor @ 2.50GHz, 2 CPUs, linux/amd64, BLAS wcmc dgemm, AVX-512 (12×16)'
# (sessions starting from this UTC time on, machine), latest last: the README's "Sessions and load".
MACHINES = [
    ('2026-11-26T00:00:00', ZEN4),
    ('2026-11-27T00:00:00', CASCADE),
]
WORKERS = 2


def parse(t):
    """Go's RFC 3339 time with up to nanoseconds → (datetime to the microsecond, nanoseconds)."""
    m = re.fullmatch(r'(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z', t)
    if not m:
        raise SystemExit(f'not a UTC time: {t}')
    ns = int((m.group(2) or '').ljust(9, '0'))
    return datetime.datetime.fromisoformat(m.group(1)), ns


def seconds_between(a, b):
    (da, na), (db, nb) = parse(a), parse(b)
    return (db - da).total_seconds() + (nb - na) / 1e9


def machine_at(began):
    day, _ = parse(began)
    found = None
    for start, m in MACHINES:
        if day >= datetime.datetime.fromisoformat(start):
            found = m
    if found is None:
        raise SystemExit(f'no machine known for a session begun {began}')
    return found


def main():
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    path = sys.argv[1]
    text = open(path, encoding='utf-8').read()
    rec = json.loads(text)
    if 'sessions' in rec:
        raise SystemExit(f'{path} already has sessions')
    sessions = {}
    if not sys.argv[2].isdigit():
        for line in open(sys.argv[2], encoding='utf-8'):
            r = json.loads(line)
            s = sessions.setdefault(r['began'], {'tasks': 0, 'wall': 0.0})
            s['tasks'] += 1
            s['wall'] = max(s['wall'], seconds_between(r['began'], r['done']))
        if len(sys.argv) == 4:
            missing = int(sys.argv[3]) - sum(s['tasks'] for s in sessions.values())
            if missing < 0:
                raise SystemExit(f'the journal has more tasks than {sys.argv[3]}')
            if missing > 0:
                last = max(sessions, key=parse)
                sessions[last]['tasks'] += missing
                sessions[last]['wall'] = seconds_between(last, rec['end'])
    else:
        sessions[rec['start']] = {'tasks': int(sys.argv[2]), 'wall': rec['wall_seconds']}
    total = sum(s['wall'] for s in sessions.values())
    if abs(total - rec['wall_seconds']) > 1e-3:
        raise SystemExit(f'{path}: the sessions sum to {total:.3f} s, the result records {rec["wall_seconds"]:.3f} s')
    out = []
    for began in sorted(sessions, key=parse):
        s = sessions[began]
        out.append({'began': began, 'tasks': s['tasks'], 'wall_seconds': s['wall'],
                    'machine': machine_at(began), 'workers': WORKERS})
    # Insert after the last field, wall_seconds, in the layout of Go's json.MarshalIndent (two
    # spaces), leaving every other byte of the file as wcmc wrote it.
    body = json.dumps(out, indent=2, ensure_ascii=False).replace('\n', '\n  ')
    new, n = re.subn(r'(\n  "wall_seconds": [^\n]*)\n}\n?$', lambda m: f'{m.group(1)},\n  "sessions": {body}\n}}\n', text)
    if n != 1:
        raise SystemExit(f'{path}: wall_seconds is not the last field')
    json.loads(new)
    open(path, 'w', encoding='utf-8').write(new)
    for s in out:
        print(f'{path}: session began {s["began"]}, {s["tasks"]} tasks, {s["wall_seconds"]:.1f} s, {s["machine"]}')


if __name__ == '__main__':
    main()

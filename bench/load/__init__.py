"""Server load: N concurrent matches between load bots, every move persisted and checked.

Each run starts ``arena serve`` (a fresh SQLite file, or ``--db``; ``--nodes K``: K nodes on a
PostgreSQL ``--db``, bot i on node i mod K) and 2N bots in one client process at nice +5:
seeded seeks, random moves after ``--think-ms`` -+ ``--think-jitter``, redirects followed; then
the database must hold each move the bots saw confirmed, once. Reported: moves/s, server-added
latency, CPU per move, pairing delays (one node / two), the DB check, the target (500 matches,
5,000 moves/s, p99 <= 10 ms, all stored). ``--soak MINUTES`` samples RSS and pauses every
10,000 finished matches (target: <= 5 MiB growth from 100,000 to 200,000; no GC pause and no
own loop lag, the lag less the wait for a CPU, over 20 ms). Linux only.

    python -m bench.load --think-ms 80 --pairing-window 0.05 --repeat 3  # the target
    python -m bench.load --nodes 1,2 --db postgresql+asyncpg://postgres@127.0.0.1/test
    python -m bench.load --callgrind --matches 20 --think-ms 20  # server instructions per move
"""

"""Server load: N concurrent matches between load bots, every move persisted and checked.

Each run starts ``arena serve --port 0`` (on a fresh SQLite file unless ``--db``; with
``--nodes K``, K nodes sharing a PostgreSQL ``--db``) and 2N bots from ``arena bots
add``, played from one client process at nice +5 (websockets' Sans-I/O client, kernel
receive times), bot i on node i mod K. A bot seeks at a seeded time in the warm-up's
first half, answers each turn with a seeded random legal move after ``--think-ms``
-+ ``--think-jitter``, follows a ``redirect``, and seeks again until the window closes;
then the servers stop and the database must hold each move the bots saw confirmed, once.
Reported: matches, moves/s, server-added latency, CPU per move (servers, PostgreSQL),
pairing delays (bots on one node / two), the DB check and the target (500 matches, 5,000
moves/s, p99 <= 10 ms, all persisted). ``--soak MINUTES`` samples the server's RSS and
``/healthz`` pauses every 10,000 finished matches (target: <= 5 MiB growth from 100,000
to 200,000, no pause over 20 ms). Linux only.

    python -m bench.load --think-ms 80 --pairing-window 0.05 --repeat 3  # the target
    python -m bench.load --nodes 1,2 --db postgresql+asyncpg://postgres@127.0.0.1/test
    python -m bench.load --soak 30 --db postgresql+asyncpg://postgres@127.0.0.1/test
"""

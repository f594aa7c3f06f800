"""Perfect-play analysis of stored Connect Four games (``arena analyse``).

``plan`` says which positions of a game to solve and turns their values into
``move_analysis`` rows (``arena.store.analysis``); ``runner.Analyser`` solves
them in a process pool (``worker``, the one module that uses ``bots.strategies.solver``)
and commits game by game; ``figures`` turns a bot's counts into accuracy and
blunders per game with intervals; ``values`` holds the score arithmetic.
Nothing is imported here, so reading figures never loads the solver.
"""

"""A random-program differential fuzzer for cpsad (issue 13, "Fidelity").

cpsad's own test corpus is closed: it differentiates the programs its authors wrote. This package
writes programs nobody wrote -- whole modules of ordinary Python + numpy, combining everything the
documentation says cpsad differentiates -- and judges cpsad on each against judges that do not
depend on it:

* ``gen``      -- the seeded grammar: ``generate_source(seed)`` is a module with an entry ``f``;
* ``oracle``   -- ``check(program)``: value against plain Python, gradient against central
  differences at two step sizes (and autograd where it runs), forward mode the same; a class per
  program (ok / refused / bad-refusal / wrong-value / wrong-grad / crash);
* ``reduce``   -- shrinks a failing program while the same failure persists;
* ``rewrite``  -- source-to-source variants for the metamorphic tests (tests/test_metamorphic.py);
* ``findings`` -- the reduced programs of today's distinct failures, one file per cause;
* ``python -m tests.fuzz`` -- the command line (``make fuzz``); tests/test_fuzz.py is the CI set.
"""

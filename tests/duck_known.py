"""The cases of tests/test_duck.py that still coerce a duck array, each with why: expected
to fail until fixed (strict: a case that starts passing is taken off this list)."""

PROGRAM = (
    "the program itself converts or reads a duck (np.array, np.asarray, np.r_, float(), "
    ".item(), a bool): as it would a CuPy or Dask array"
)
IN_PLACE = (
    "the program writes into its own array (`x += v`, `x[i] = v`), which cpsad runs as numpy "
    "does"
)
COMPOSITE = (
    "a composite (cpsad/rules/composite.py) whose numpy source calls np.asarray or tests values"
)
HELPERS = (
    "a helper's own derivative (second order, tests/corpus_emitted.py), or a container adjoint "
    "mixed with a duck, still numpy-only"
)

# every float array a duck
KNOWN: dict[str, str] = {}
KNOWN.update(
    dict.fromkeys(
        [
            "arange-1",
            "array-1",
            "array-3",
            "array-4",
            "array_literal-1",
            "array_nested-0",
            "array_of-0",
            "asarray-1",
            "asarray_of-0",
            "c_key-0",
            "c_key-1",
            "c_literal-0",
            "float32_builtin-1",
            "float64_builtin-1",
            "float_builtin-1",
            "full-1",
            "item_flat-0",
            "item_only-0",
            "item_per_axis-0",
            "item_tuple-0",
            "min_of-0",
            "r_directive-0",
            "r_key-0",
            "r_key-1",
            "r_key-2",
            "r_key-3",
            "r_last_axis-0",
            "r_literal-0",
        ],
        PROGRAM,
    )
)
KNOWN.update(
    dict.fromkeys(
        ["aug_assign_rebinds-0", "aug_store_into_active-0", "store_into_active-0"], IN_PLACE
    )
)
KNOWN.update(
    dict.fromkeys(
        [
            "average-0",
            "average-1",
            "average_returned-0",
            "real_if_close-0",
        ],
        COMPOSITE,
    )
)
KNOWN.update(
    dict.fromkeys(
        [
            "acc_-5",
            "index_concatenated_jvp_-0",
            "index_concatenated_jvp_-1",
            "index_concatenated_jvp_-2",
            "index_concatenated_jvp_-3",
            "index_concatenated_jvp_-4",
            "index_concatenated_vjp_-0",
            "index_concatenated_vjp_-1",
            "index_concatenated_vjp_-2",
            "index_concatenated_vjp_-3",
            "index_concatenated_vjp_-4",
            "max_builtin_jvp_seq-1",
            "max_builtin_seq-1",
            "max_builtin_t_seq-1",
            "prod_hessian_-0",
            "prod_hessian_-1",
            "prod_hessian_-2",
            "prod_jvp_-0",
            "prod_jvp_-1",
            "prod_jvp_-2",
            "prod_vjp_-0",
            "prod_vjp_-1",
            "prod_vjp_-2",
            "swap_entries_-1",
        ],
        HELPERS,
    )
)

# numpy arguments, a duck cotangent
KNOWN_MIXED: dict[str, str] = {}
KNOWN_MIXED.update(dict.fromkeys(["list_builtin-1"], HELPERS))

"""The cases of tests/test_duck.py that fail on a duck array, each with why -- all but a few
(PROD_PARTIALS) a conversion, a write or a value read: expected to fail until fixed (strict: a
case that starts passing is taken off this list)."""

PROGRAM = (
    "the program itself converts or reads a duck (np.array, np.asarray, np.r_, float(), "
    ".item(), a bool): as it would a CuPy or Dask array"
)
IN_PLACE = (
    "the program writes into its own array (`x += v`, `x[i] = v`), which cpsad runs as numpy "
    "does"
)
VALUES = (
    "numpy's function itself reads values (np.average refuses weights that sum to zero, "
    "np.real_if_close's result type depends on the imaginary parts): so do Dask's and CuPy's"
)
R_ITEMS = (
    "np.r_ and np.c_ are not dispatched and convert their items (the programs r_key, r_literal, "
    "... above): the helpers of their rules meet another library's items only in these cases"
)
PROD_PARTIALS = (
    "no conversion: on another library prod_vjp takes the formula that holds with zeros, which "
    "does not read `out`, so its partial derivatives in `out` and `a` differ from numpy's path "
    "(g * out / a without zeros); they agree along out = np.prod(a), which is what a program "
    "differentiates (test_second_order_on_ducks)"
)

PYTHON_NUMBERS = (
    "math.fsum and the statistics module read each value into a Python float: so they would a "
    "CuPy or Dask array's"
)

# every float array a duck
KNOWN: dict[str, str] = {}
KNOWN.update(dict.fromkeys(["fsum_of-1", "mean_of-1"], PYTHON_NUMBERS))
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
    dict.fromkeys(["average-0", "average-1", "average_returned-0", "real_if_close-0"], VALUES)
)
KNOWN.update(
    dict.fromkeys(
        [
            "combinations_values-0",
            "combinations_with_replacement_values-0",
            "permutations_values-0",
            "zip_values-0",
            "enumerate_values-0",
            "dict_values-0",
            "prod_and_dist_values-0",
            "product_values-0",
            "accumulate_values-0",
        ],
        PROGRAM,
    )
)
KNOWN.update(
    dict.fromkeys(
        ["sorted_values-0", "sorted_rows-0"],
        "Python's sorted compares the items, reading each comparison's bool back (so would "
        "sorting CuPy or Dask arrays in Python)",
    )
)
KNOWN.update(
    dict.fromkeys(
        [
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
        ],
        R_ITEMS,
    )
)
KNOWN.update(
    dict.fromkeys(
        [
            "prod_hessian_-0",
            "prod_hessian_-1",
            "prod_hessian_-2",
            "prod_jvp_-0",
            "prod_jvp_-1",
            "prod_jvp_-2",
            "prod_vjp_-0",
            "prod_vjp_-1",
            "prod_vjp_-2",
        ],
        PROD_PARTIALS,
    )
)

# numpy arguments, a duck cotangent: none left
KNOWN_MIXED: dict[str, str] = {}

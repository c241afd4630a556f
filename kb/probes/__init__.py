"""``msmap probe``: fixed snippets run in torch and MindSpore on CPU, outputs compared.

- ``defs``     — probe definitions (data/probes/defs/*.yaml) and recorded results;
- ``generate`` — equivalence probes generated from the KB with argument recipes;
- ``runner``   — a pool of at most two worker processes, batches, timeouts, retries;
- ``worker``   — runs probes inside a throw-away process (``python -m kb.probes.worker``);
- ``outputs``  — converts outputs to numpy and compares values, dtypes and shapes.

Results: holds (the claim — equivalence or caveat — was observed), differs,
no_cpu_kernel (MindSpore has no CPU kernel for the op on this version), error, timeout.
"""

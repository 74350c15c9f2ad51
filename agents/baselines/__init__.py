"""Papers' baselines and trivial policies, one module per env family (each declares ``POLICY_SPECS``)."""

"""Programs built on the package, never imported by it: the fuzzer (`rulegrad fuzz`), the demo
(`rulegrad demo`) and its training run. The runtime and the backends import nothing from here."""

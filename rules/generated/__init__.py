"""rulegrad.rules.generated"""

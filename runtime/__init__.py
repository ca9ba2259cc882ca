"""rulegrad.runtime"""

"""rulegrad.rules"""

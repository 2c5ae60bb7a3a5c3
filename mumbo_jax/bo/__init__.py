"""BO machinery: the maximiser over X x Z, decision rules, ask/tell, the compiled loop."""

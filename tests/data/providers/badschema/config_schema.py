raise RuntimeError("the schema exploded")

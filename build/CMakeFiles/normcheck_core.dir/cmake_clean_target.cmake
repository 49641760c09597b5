file(REMOVE_RECURSE
  "libnormcheck_core.a"
)

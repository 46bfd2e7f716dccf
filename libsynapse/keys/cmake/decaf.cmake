# libdecaf (Debian libdecaf-dev): the ristretto255 group used by sr25519 verification
# (src/sr25519.cpp), linked PRIVATE into bt::keys. The package ships no pkg-config file, so it is
# found by path. Defines the imported target bt_decaf::decaf once, and leaves it undefined when
# libdecaf is missing (the caller reports that). Used by the build (libsynapse/keys/CMakeLists.txt)
# and installed next to the package config, which includes it for consumers: bt::keys is a static
# library, so a consumer's link needs libdecaf as well.
if(NOT TARGET bt_decaf::decaf)
  find_path(BT_DECAF_INCLUDE_DIR decaf/point_255.h PATH_SUFFIXES decaf)
  find_library(BT_DECAF_LIBRARY NAMES decaf)
  if(BT_DECAF_INCLUDE_DIR AND BT_DECAF_LIBRARY)
    add_library(bt_decaf::decaf UNKNOWN IMPORTED GLOBAL)
    set_target_properties(bt_decaf::decaf PROPERTIES
      IMPORTED_LOCATION "${BT_DECAF_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${BT_DECAF_INCLUDE_DIR}")
  endif()
endif()

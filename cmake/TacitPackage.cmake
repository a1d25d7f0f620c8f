# The tacit CMake package: find_package(tacit) gives tacit::<module> (the static libraries, e.g.
# tacit::backend for a compiler driver), tacit::options, tacit::gecode, tacit::xgboost,
# tacit::curl and tacit::malloc (the
# executables' allocator). Standalone backends
# written by `tacit gen-backend` link through it (docs/gen-backend.md).
#
#  * build tree:  ${PROJECT_BINARY_DIR}/tacitConfig.cmake, usable with -Dtacit_DIR=<build dir>;
#  * install:     `cmake --install <build dir> --prefix P` installs bin/tacit, the libraries,
#                 the headers (include/tacit/<module>/*.h) and lib/cmake/tacit/tacitConfig.cmake,
#                 usable with -DCMAKE_PREFIX_PATH=P.
#
# The package is exactly the build it comes from: a sanitizer build exports its -fsanitize flags
# (consumers must be built with them too) and the version must match exactly (a generated backend
# embeds a spec its generator checked).

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TACIT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tacit)
get_property(tacit_exported_libraries GLOBAL PROPERTY TACIT_EXPORTED_LIBRARIES)

install(TARGETS ${tacit_exported_libraries} tacit_options tacit_gecode tacit_xgboost tacit_curl tacit_malloc
        EXPORT tacitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
)
install(TARGETS tacit RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/ DESTINATION include/tacit
        FILES_MATCHING PATTERN "*.h" PATTERN "*.def")
install(EXPORT tacitTargets NAMESPACE tacit:: DESTINATION ${TACIT_INSTALL_CMAKEDIR})

configure_file(${CMAKE_CURRENT_LIST_DIR}/tacitConfig.cmake.in ${PROJECT_BINARY_DIR}/tacitConfig.cmake
               @ONLY)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tacitConfigVersion.cmake
                                 COMPATIBILITY ExactVersion)
install(FILES ${PROJECT_BINARY_DIR}/tacitConfig.cmake ${PROJECT_BINARY_DIR}/tacitConfigVersion.cmake
        DESTINATION ${TACIT_INSTALL_CMAKEDIR})

# The build tree is a package too (no install step needed).
export(EXPORT tacitTargets NAMESPACE tacit:: FILE ${PROJECT_BINARY_DIR}/tacitTargets.cmake)

! SPDX-License-Identifier: Apache-2.0
! Module sfft: the Fortran interface to libsfft (include/sfft/sfft.h), Fortran 2018 over ISO_C_BINDING.
!
! Every function of the C header under its C name and with its C argument order; read the header for what
! each one does. How the C types appear here:
!   - sfft_status and every enum: integer(c_int); the enum values and version macros are named constants.
!   - uint64_t / int64_t: integer(c_int64_t) (unsigned values must stay below 2**63); uint32_t: c_int32_t.
!   - Plans (sfft_plan, nufft3_plan, spfft2d_plan): type(c_ptr); a plan is c_null_ptr before create.
!   - Data arrays (void *, host or device memory): type(c_ptr), value. Pass c_loc(array) (the array needs
!     the target attribute) or a device address; c_null_ptr where the C function accepts NULL.
!   - Option structs: bind(c) derived types laid out as in C. A const pointer to options is an optional
!     argument: leaving it out passes NULL (the defaults). Fill a struct with sfft_options_init,
!     sfft_sparse_options_init or nufft3_options_init (module subroutines calling the C *_init_sized
!     function with c_sizeof of the argument, as the header's macros of those names do).
!   - Strings: sfft_status_string, sfft_last_error and sfft_version_string return the C pointer;
!     sfft_string() turns it, or a character field of sfft_build_info, into a Fortran string, and
!     sfft_last_error_string() is sfft_string(sfft_last_error()).
!   - spfft2d_create_from_mtx takes a Fortran character path (the C terminator is added here).
!   - nufft3_exec(plan, f, F): Fortran does not tell f from F, so the output is named f_out.
! Arrays are C-order: a Fortran array a(n1, n2) is the C array of shape {n2, n1}, and complex(c_float_complex)
! / complex(c_double_complex) arrays are the interleaved complex64 / complex128 layout.
module sfft
  use, intrinsic :: iso_c_binding, only: c_ptr, c_funptr, c_int, c_int32_t, c_int64_t, c_size_t, c_double, &
                                         c_char, c_null_char, c_associated, c_f_pointer, c_sizeof
  implicit none
  private

  ! ------------------------------------------------------------------------------- constants
  integer(c_int), parameter, public :: SFFT_VERSION_MAJOR = 0, SFFT_VERSION_MINOR = 1, SFFT_VERSION_PATCH = 0
  integer(c_int), parameter, public :: SFFT_VERSION_NUMBER = &
    SFFT_VERSION_MAJOR * 10000 + SFFT_VERSION_MINOR * 100 + SFFT_VERSION_PATCH

  ! sfft_status
  integer(c_int), parameter, public :: SFFT_SUCCESS = 0, SFFT_ERROR_INVALID_ARGUMENT = 1, &
    SFFT_ERROR_UNSUPPORTED = 2, SFFT_ERROR_OUT_OF_MEMORY = 3, SFFT_ERROR_NO_DEVICE = 4, SFFT_ERROR_DEVICE = 5, &
    SFFT_ERROR_INTERNAL = 6
  ! sfft_dtype
  integer(c_int), parameter, public :: SFFT_FLOAT32 = 1, SFFT_FLOAT64 = 2, SFFT_COMPLEX64 = 3, SFFT_COMPLEX128 = 4
  ! sfft_backend
  integer(c_int), parameter, public :: SFFT_BACKEND_AUTO = 0, SFFT_BACKEND_CPU = 1, SFFT_BACKEND_CUDA = 2
  ! sfft_build_info%families bits
  integer(c_int32_t), parameter, public :: SFFT_FAMILY_SHIFT = 1, SFFT_FAMILY_SPARSE = 2, SFFT_FAMILY_NUFFT3 = 4, &
    SFFT_FAMILY_SPFFT2D = 8
  ! nufft3_kernel
  integer(c_int), parameter, public :: NUFFT3_KERNEL_ES = 0, NUFFT3_KERNEL_GAUSSIAN = 1, NUFFT3_KERNEL_PSWF = 2
  ! spfft2d_method
  integer(c_int), parameter, public :: SPFFT2D_METHOD_AUTO = 0, SPFFT2D_METHOD_DIRECT = 1, &
    SPFFT2D_METHOD_DIRECT_ROWS = 2, SPFFT2D_METHOD_DENSE = 3, SPFFT2D_METHOD_PRUNED = 4
  ! sfft_sparse_variant
  integer(c_int), parameter, public :: SFFT_SPARSE_AUTO = 0, SFFT_SPARSE_ROBUST = 1, SFFT_SPARSE_EXACT = 2

  ! ------------------------------------------------------------------------------- option structs
  type, bind(c), public :: sfft_options
    integer(c_size_t) :: struct_size
    integer(c_int) :: backend
    integer(c_int) :: device
    type(c_ptr) :: stream
    integer(c_int) :: threads
    integer(c_int64_t) :: seed
  end type

  type, bind(c), public :: sfft_build_info
    integer(c_size_t) :: struct_size
    integer(c_int) :: version
    integer(c_int32_t) :: families
    integer(c_int) :: cuda_compiled
    integer(c_int) :: cuda_loaded
    integer(c_int) :: cuda_device_count
    integer(c_int) :: cuda_runtime_version
    integer(c_int) :: cuda_driver_version
    integer(c_int) :: cufft_version
    character(kind=c_char) :: cuda_architectures(64)
    character(kind=c_char) :: fft_library(64)
    character(kind=c_char) :: cuda_unavailable(256)
  end type

  type, bind(c), public :: nufft3_options
    integer(c_size_t) :: struct_size
    integer(c_int) :: ntransf
    integer(c_int) :: kernel
    real(c_double) :: upsampfac
    integer(c_int) :: maxbatchsize
  end type

  type, bind(c), public :: sfft_sparse_options
    integer(c_size_t) :: struct_size
    integer(c_int) :: variant
    real(c_double) :: filter_tolerance
    real(c_double) :: bucket_factor
    integer(c_int) :: location_loops
    integer(c_int) :: estimation_loops
    integer(c_int) :: bits_per_stage
    integer(c_int) :: min_votes
    integer(c_int) :: comb_loops
    integer(c_int64_t) :: comb_width
    integer(c_int64_t) :: comb_keep
  end type

  ! sfft_get_report's result (docs/sparse-noise.md): set struct_size = c_sizeof(report) before the call. The
  ! uint64_t fields are c_int64_t here, as for sfft_exec's count.
  type, bind(c), public :: sfft_report
    integer(c_size_t) :: struct_size
    integer(c_int) :: variant
    integer(c_int) :: unexplained
    integer(c_int64_t) :: count
    integer(c_int64_t) :: significant
    integer(c_int64_t) :: unexplained_buckets
    real(c_double) :: explained
    real(c_double) :: signal_energy
    real(c_double) :: noise_floor
    real(c_double) :: excess
  end type

  ! ------------------------------------------------------------------------------- procedures
  public :: sfft_options_init, sfft_options_init_sized, sfft_get_build_info, sfft_status_string, sfft_last_error, &
    sfft_version_string, sfft_version, sfft_cuda_device_count
  public :: fftshift_nd, ifftshift_nd
  public :: nufft3_options_init, nufft3_options_init_sized, nufft3_create, nufft3_set_options, nufft3_setpts, &
    nufft3_exec, nufft3_destroy
  public :: spfft2d_rows_callback, spfft2d_create, spfft2d_create_from_mtx, spfft2d_exec, spfft2d_exec_rows, &
    spfft2d_exec_stream, spfft2d_set_tile_rows, spfft2d_set_method, spfft2d_get_method, spfft2d_get_info, &
    spfft2d_destroy
  public :: sfft_sparse_options_init, sfft_sparse_options_init_sized, sfft_create, sfft_create_ex, sfft_exec, &
    sfft_exec_batch, sfft_get_report, sfft_destroy
  public :: sfft_string, sfft_last_error_string

  ! A Fortran string from a C string pointer (c_null_ptr gives '') or from a NUL-terminated character array.
  interface sfft_string
    module procedure string_from_pointer, string_from_chars
  end interface

  ! spfft2d_exec_stream's callback: pass c_funloc of a bind(c) subroutine with this interface.
  abstract interface
    subroutine spfft2d_rows_callback(row0, nrows, rows, user) bind(c)
      import :: c_int64_t, c_ptr
      integer(c_int64_t), value :: row0, nrows
      type(c_ptr), value :: rows, user
    end subroutine
  end interface

  interface
    ! ------------------------------------------------------------------------- common
    subroutine sfft_options_init_sized(opts, struct_size) bind(c, name="sfft_options_init_sized")
      import :: sfft_options, c_size_t
      type(sfft_options), intent(out) :: opts
      integer(c_size_t), value :: struct_size
    end subroutine
    integer(c_int) function sfft_get_build_info(info, struct_size) bind(c, name="sfft_get_build_info")
      import :: sfft_build_info, c_size_t, c_int
      type(sfft_build_info), intent(inout) :: info
      integer(c_size_t), value :: struct_size
    end function
    type(c_ptr) function sfft_status_string(s) bind(c, name="sfft_status_string")
      import :: c_ptr, c_int
      integer(c_int), value :: s
    end function
    type(c_ptr) function sfft_last_error() bind(c, name="sfft_last_error")
      import :: c_ptr
    end function
    type(c_ptr) function sfft_version_string() bind(c, name="sfft_version_string")
      import :: c_ptr
    end function
    integer(c_int) function sfft_version() bind(c, name="sfft_version")
      import :: c_int
    end function
    integer(c_int) function sfft_cuda_device_count() bind(c, name="sfft_cuda_device_count")
      import :: c_int
    end function

    ! ------------------------------------------------------------------------- N-d fftshift / ifftshift
    integer(c_int) function fftshift_nd(out, in, ndim, shape, axes_mask, dtype, opts) bind(c, name="fftshift_nd")
      import :: c_ptr, c_int, c_int32_t, c_int64_t, sfft_options
      type(c_ptr), value :: out, in
      integer(c_int), value :: ndim
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int32_t), value :: axes_mask
      integer(c_int), value :: dtype
      type(sfft_options), intent(in), optional :: opts
    end function
    integer(c_int) function ifftshift_nd(out, in, ndim, shape, axes_mask, dtype, opts) bind(c, name="ifftshift_nd")
      import :: c_ptr, c_int, c_int32_t, c_int64_t, sfft_options
      type(c_ptr), value :: out, in
      integer(c_int), value :: ndim
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int32_t), value :: axes_mask
      integer(c_int), value :: dtype
      type(sfft_options), intent(in), optional :: opts
    end function

    ! ------------------------------------------------------------------------- type-3 NUFFT
    subroutine nufft3_options_init_sized(opts, struct_size) bind(c, name="nufft3_options_init_sized")
      import :: nufft3_options, c_size_t
      type(nufft3_options), intent(out) :: opts
      integer(c_size_t), value :: struct_size
    end subroutine
    integer(c_int) function nufft3_create(plan, dim, dtype, sign, tol, opts) bind(c, name="nufft3_create")
      import :: c_ptr, c_int, c_double, sfft_options
      type(c_ptr), intent(out) :: plan
      integer(c_int), value :: dim, dtype, sign
      real(c_double), value :: tol
      type(sfft_options), intent(in), optional :: opts
    end function
    integer(c_int) function nufft3_set_options(plan, opts) bind(c, name="nufft3_set_options")
      import :: c_ptr, c_int, nufft3_options
      type(c_ptr), value :: plan
      type(nufft3_options), intent(in), optional :: opts
    end function
    integer(c_int) function nufft3_setpts(plan, n, x, y, z, k, s, t, u) bind(c, name="nufft3_setpts")
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: plan
      integer(c_int64_t), value :: n
      type(c_ptr), value :: x, y, z
      integer(c_int64_t), value :: k
      type(c_ptr), value :: s, t, u
    end function
    integer(c_int) function nufft3_exec(plan, f, f_out) bind(c, name="nufft3_exec")
      import :: c_ptr, c_int
      type(c_ptr), value :: plan, f, f_out
    end function
    integer(c_int) function nufft3_destroy(plan) bind(c, name="nufft3_destroy")
      import :: c_ptr, c_int
      type(c_ptr), value :: plan
    end function

    ! ------------------------------------------------------------------------- sparse-input 2-D FFT
    integer(c_int) function spfft2d_create(plan, rows, cols, nnz, row_idx, col_idx, values, out_dtype, opts) &
        bind(c, name="spfft2d_create")
      import :: c_ptr, c_int, c_int64_t, sfft_options
      type(c_ptr), intent(out) :: plan
      integer(c_int64_t), value :: rows, cols, nnz
      type(c_ptr), value :: row_idx, col_idx, values
      integer(c_int), value :: out_dtype
      type(sfft_options), intent(in), optional :: opts
    end function
    integer(c_int) function c_spfft2d_create_from_mtx(plan, path, binary, out_dtype, opts) &
        bind(c, name="spfft2d_create_from_mtx")
      import :: c_ptr, c_int, c_char, sfft_options
      type(c_ptr), intent(out) :: plan
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int), value :: binary, out_dtype
      type(sfft_options), intent(in), optional :: opts
    end function
    integer(c_int) function spfft2d_exec(plan, out) bind(c, name="spfft2d_exec")
      import :: c_ptr, c_int
      type(c_ptr), value :: plan, out
    end function
    integer(c_int) function spfft2d_exec_rows(plan, row0, nrows, out) bind(c, name="spfft2d_exec_rows")
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: plan
      integer(c_int64_t), value :: row0, nrows
      type(c_ptr), value :: out
    end function
    integer(c_int) function spfft2d_exec_stream(plan, callback, user) bind(c, name="spfft2d_exec_stream")
      import :: c_ptr, c_funptr, c_int
      type(c_ptr), value :: plan
      type(c_funptr), value :: callback
      type(c_ptr), value :: user
    end function
    integer(c_int) function spfft2d_set_tile_rows(plan, tile_rows) bind(c, name="spfft2d_set_tile_rows")
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: plan
      integer(c_int64_t), value :: tile_rows
    end function
    integer(c_int) function spfft2d_set_method(plan, method) bind(c, name="spfft2d_set_method")
      import :: c_ptr, c_int
      type(c_ptr), value :: plan
      integer(c_int), value :: method
    end function
    integer(c_int) function spfft2d_get_method(plan, method) bind(c, name="spfft2d_get_method")
      import :: c_ptr, c_int
      type(c_ptr), value :: plan
      integer(c_int), intent(out) :: method
    end function
    ! Every output is optional (left out = NULL).
    integer(c_int) function spfft2d_get_info(plan, rows, cols, nnz, tile_rows, workspace_bytes, backend) &
        bind(c, name="spfft2d_get_info")
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: plan
      integer(c_int64_t), intent(out), optional :: rows, cols, nnz, tile_rows, workspace_bytes
      integer(c_int), intent(out), optional :: backend
    end function
    integer(c_int) function spfft2d_destroy(plan) bind(c, name="spfft2d_destroy")
      import :: c_ptr, c_int
      type(c_ptr), value :: plan
    end function

    ! ------------------------------------------------------------------------- sparse FFT
    subroutine sfft_sparse_options_init_sized(knobs, struct_size) bind(c, name="sfft_sparse_options_init_sized")
      import :: sfft_sparse_options, c_size_t
      type(sfft_sparse_options), intent(out) :: knobs
      integer(c_size_t), value :: struct_size
    end subroutine
    integer(c_int) function sfft_create(plan, n, k, dtype, opts) bind(c, name="sfft_create")
      import :: c_ptr, c_int, c_int64_t, sfft_options
      type(c_ptr), intent(out) :: plan
      integer(c_int64_t), value :: n, k
      integer(c_int), value :: dtype
      type(sfft_options), intent(in), optional :: opts
    end function
    integer(c_int) function sfft_create_ex(plan, n, k, dtype, opts, knobs) bind(c, name="sfft_create_ex")
      import :: c_ptr, c_int, c_int64_t, sfft_options, sfft_sparse_options
      type(c_ptr), intent(out) :: plan
      integer(c_int64_t), value :: n, k
      integer(c_int), value :: dtype
      type(sfft_options), intent(in), optional :: opts
      type(sfft_sparse_options), intent(in), optional :: knobs
    end function
    ! freqs: count (capacity in, number written out) uint64_t values, as values, host or device memory.
    integer(c_int) function sfft_exec(plan, x, freqs, values, count) bind(c, name="sfft_exec")
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: plan, x, freqs, values
      integer(c_int64_t), intent(inout) :: count
    end function
    ! counts(1:batch): each signal's capacity in, its count out (host memory); the uint64_t arguments are
    ! c_int64_t here, as for sfft_exec's count.
    integer(c_int) function sfft_exec_batch(plan, batch, x, x_dist, freqs, values, out_dist, counts) &
        bind(c, name="sfft_exec_batch")
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: plan, x, freqs, values
      integer(c_int64_t), value :: batch, x_dist, out_dist
      integer(c_int64_t), intent(inout) :: counts(*)
    end function
    ! signal: 0 after sfft_exec, 0..batch-1 after sfft_exec_batch.
    integer(c_int) function sfft_get_report(plan, signal, report) bind(c, name="sfft_get_report")
      import :: c_ptr, c_int, c_int64_t, sfft_report
      type(c_ptr), value :: plan
      integer(c_int64_t), value :: signal
      type(sfft_report), intent(inout) :: report
    end function
    integer(c_int) function sfft_destroy(plan) bind(c, name="sfft_destroy")
      import :: c_ptr, c_int
      type(c_ptr), value :: plan
    end function

    ! ------------------------------------------------------------------------- libc
    integer(c_size_t) function c_strlen(s) bind(c, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
    end function
  end interface

contains

  ! The header's sfft_options_init(opts) macro: defaults, struct_size = this struct's size.
  subroutine sfft_options_init(opts)
    type(sfft_options), intent(out) :: opts
    call sfft_options_init_sized(opts, c_sizeof(opts))
  end subroutine

  subroutine nufft3_options_init(opts)
    type(nufft3_options), intent(out) :: opts
    call nufft3_options_init_sized(opts, c_sizeof(opts))
  end subroutine

  subroutine sfft_sparse_options_init(knobs)
    type(sfft_sparse_options), intent(out) :: knobs
    call sfft_sparse_options_init_sized(knobs, c_sizeof(knobs))
  end subroutine

  ! binary /= 0: every stored nonzero is 1. opts left out: defaults.
  integer(c_int) function spfft2d_create_from_mtx(plan, path, binary, out_dtype, opts) result(status)
    type(c_ptr), intent(out) :: plan
    character(len=*), intent(in) :: path
    integer(c_int), intent(in) :: binary, out_dtype
    type(sfft_options), intent(in), optional :: opts
    status = c_spfft2d_create_from_mtx(plan, path // c_null_char, binary, out_dtype, opts)
  end function

  ! This thread's last failure detail ('' if none).
  function sfft_last_error_string() result(s)
    character(len=:), allocatable :: s
    s = string_from_pointer(sfft_last_error())
  end function

  function string_from_pointer(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

  function string_from_chars(chars) result(s)
    character(kind=c_char), intent(in) :: chars(:)
    character(len=:), allocatable :: s
    integer :: i, n
    n = size(chars)
    do i = 1, size(chars)
      if (chars(i) == c_null_char) then
        n = i - 1
        exit
      end if
    end do
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function
end module sfft

! SPDX-License-Identifier: Apache-2.0
! The Fortran module `sfft` against the C header and the library: struct layouts, enum values and version as C
! sees them (c_facts.c), then every family on the CPU backend, each result compared with a direct computation,
! and the error paths (status codes, sfft_last_error_string, the sparse FFT's capacity report).
module api_test_support
  use, intrinsic :: iso_c_binding
  implicit none
  integer, parameter :: spec_rows = 6, spec_cols = 8, spec_half = spec_cols / 2 + 1
  integer :: failures = 0, checks = 0
  integer :: deliveries(spec_rows) = 0
  ! The Fortran side of the facts c_facts.c lists, filled by add().
  integer :: count = 0
  integer(c_int64_t) :: f_side(128)
  character(len=40) :: names(128)

  interface
    integer(c_int) function sfft_test_c_facts(facts, capacity) bind(c, name="sfft_test_c_facts")
      import :: c_int, c_int64_t
      integer(c_int64_t), intent(out) :: facts(*)
      integer(c_int), value :: capacity
    end function
  end interface

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    checks = checks + 1
    if (.not. ok) then
      failures = failures + 1
      print '(2a)', 'FAILED: ', what
    end if
  end subroutine

  ! spfft2d_exec_stream's callback: copies the block into the spectrum `user` points to.
  subroutine collect_rows(row0, nrows, rows, user) bind(c)
    integer(c_int64_t), value :: row0, nrows
    type(c_ptr), value :: rows, user
    complex(c_double_complex), pointer :: block(:, :), spectrum(:, :)
    call c_f_pointer(rows, block, [int(spec_half, c_int64_t), nrows])
    call c_f_pointer(user, spectrum, [spec_half, spec_rows])
    spectrum(:, row0 + 1:row0 + nrows) = block
    deliveries(row0 + 1:row0 + nrows) = deliveries(row0 + 1:row0 + nrows) + 1
  end subroutine

  subroutine add(label, fact)
    character(len=*), intent(in) :: label
    integer(c_int64_t), intent(in) :: fact
    count = count + 1
    names(count) = label
    f_side(count) = fact
  end subroutine

  integer(c_int64_t) function offset(base, field)
    type(c_ptr), intent(in) :: base, field
    offset = transfer(field, 0_c_intptr_t) - transfer(base, 0_c_intptr_t)
  end function
end module api_test_support

program api_test
  use, intrinsic :: iso_c_binding
  use sfft
  use api_test_support
  implicit none
  real(c_double), parameter :: pi = acos(-1.0_c_double)

  call test_layout()
  call test_common()
  call test_shift()
  call test_nufft3()
  call test_spfft2d()
  call test_sparse()
  print '(i0, a, i0, a)', checks - failures, ' passed, ', failures, ' failed'
  if (failures /= 0) error stop 1

contains

  subroutine test_layout()
    type(sfft_options), target :: o
    type(sfft_build_info), target :: b
    type(nufft3_options), target :: n
    type(sfft_sparse_options), target :: s
    type(sfft_report), target :: r
    integer(c_int64_t) :: c_side(size(f_side))
    integer :: i
    call add('sizeof(sfft_options)', c_sizeof(o))
    call add('sfft_options.struct_size', offset(c_loc(o), c_loc(o%struct_size)))
    call add('sfft_options.backend', offset(c_loc(o), c_loc(o%backend)))
    call add('sfft_options.device', offset(c_loc(o), c_loc(o%device)))
    call add('sfft_options.stream', offset(c_loc(o), c_loc(o%stream)))
    call add('sfft_options.threads', offset(c_loc(o), c_loc(o%threads)))
    call add('sfft_options.seed', offset(c_loc(o), c_loc(o%seed)))
    call add('sizeof(sfft_build_info)', c_sizeof(b))
    call add('build_info.struct_size', offset(c_loc(b), c_loc(b%struct_size)))
    call add('build_info.version', offset(c_loc(b), c_loc(b%version)))
    call add('build_info.families', offset(c_loc(b), c_loc(b%families)))
    call add('build_info.cuda_compiled', offset(c_loc(b), c_loc(b%cuda_compiled)))
    call add('build_info.cuda_loaded', offset(c_loc(b), c_loc(b%cuda_loaded)))
    call add('build_info.cuda_device_count', offset(c_loc(b), c_loc(b%cuda_device_count)))
    call add('build_info.cuda_runtime_version', offset(c_loc(b), c_loc(b%cuda_runtime_version)))
    call add('build_info.cuda_driver_version', offset(c_loc(b), c_loc(b%cuda_driver_version)))
    call add('build_info.cufft_version', offset(c_loc(b), c_loc(b%cufft_version)))
    call add('build_info.cuda_architectures', offset(c_loc(b), c_loc(b%cuda_architectures)))
    call add('build_info.fft_library', offset(c_loc(b), c_loc(b%fft_library)))
    call add('build_info.cuda_unavailable', offset(c_loc(b), c_loc(b%cuda_unavailable)))
    call add('sizeof(nufft3_options)', c_sizeof(n))
    call add('nufft3_options.struct_size', offset(c_loc(n), c_loc(n%struct_size)))
    call add('nufft3_options.ntransf', offset(c_loc(n), c_loc(n%ntransf)))
    call add('nufft3_options.kernel', offset(c_loc(n), c_loc(n%kernel)))
    call add('nufft3_options.upsampfac', offset(c_loc(n), c_loc(n%upsampfac)))
    call add('nufft3_options.maxbatchsize', offset(c_loc(n), c_loc(n%maxbatchsize)))
    call add('sizeof(sfft_sparse_options)', c_sizeof(s))
    call add('sparse_options.struct_size', offset(c_loc(s), c_loc(s%struct_size)))
    call add('sparse_options.variant', offset(c_loc(s), c_loc(s%variant)))
    call add('sparse_options.filter_tolerance', offset(c_loc(s), c_loc(s%filter_tolerance)))
    call add('sparse_options.bucket_factor', offset(c_loc(s), c_loc(s%bucket_factor)))
    call add('sparse_options.location_loops', offset(c_loc(s), c_loc(s%location_loops)))
    call add('sparse_options.estimation_loops', offset(c_loc(s), c_loc(s%estimation_loops)))
    call add('sparse_options.bits_per_stage', offset(c_loc(s), c_loc(s%bits_per_stage)))
    call add('sparse_options.min_votes', offset(c_loc(s), c_loc(s%min_votes)))
    call add('sparse_options.comb_loops', offset(c_loc(s), c_loc(s%comb_loops)))
    call add('sparse_options.comb_width', offset(c_loc(s), c_loc(s%comb_width)))
    call add('sparse_options.comb_keep', offset(c_loc(s), c_loc(s%comb_keep)))
    call add('sizeof(sfft_report)', c_sizeof(r))
    call add('report.struct_size', offset(c_loc(r), c_loc(r%struct_size)))
    call add('report.variant', offset(c_loc(r), c_loc(r%variant)))
    call add('report.unexplained', offset(c_loc(r), c_loc(r%unexplained)))
    call add('report.count', offset(c_loc(r), c_loc(r%count)))
    call add('report.significant', offset(c_loc(r), c_loc(r%significant)))
    call add('report.unexplained_buckets', offset(c_loc(r), c_loc(r%unexplained_buckets)))
    call add('report.explained', offset(c_loc(r), c_loc(r%explained)))
    call add('report.signal_energy', offset(c_loc(r), c_loc(r%signal_energy)))
    call add('report.noise_floor', offset(c_loc(r), c_loc(r%noise_floor)))
    call add('report.excess', offset(c_loc(r), c_loc(r%excess)))
    ! Every C enum is passed as integer(c_int).
    do i = 1, 6
      call add('sizeof(an enum)', c_sizeof(0_c_int))
    end do
    call add('SFFT_SUCCESS', int(SFFT_SUCCESS, c_int64_t))
    call add('SFFT_ERROR_INVALID_ARGUMENT', int(SFFT_ERROR_INVALID_ARGUMENT, c_int64_t))
    call add('SFFT_ERROR_UNSUPPORTED', int(SFFT_ERROR_UNSUPPORTED, c_int64_t))
    call add('SFFT_ERROR_OUT_OF_MEMORY', int(SFFT_ERROR_OUT_OF_MEMORY, c_int64_t))
    call add('SFFT_ERROR_NO_DEVICE', int(SFFT_ERROR_NO_DEVICE, c_int64_t))
    call add('SFFT_ERROR_DEVICE', int(SFFT_ERROR_DEVICE, c_int64_t))
    call add('SFFT_ERROR_INTERNAL', int(SFFT_ERROR_INTERNAL, c_int64_t))
    call add('SFFT_FLOAT32', int(SFFT_FLOAT32, c_int64_t))
    call add('SFFT_FLOAT64', int(SFFT_FLOAT64, c_int64_t))
    call add('SFFT_COMPLEX64', int(SFFT_COMPLEX64, c_int64_t))
    call add('SFFT_COMPLEX128', int(SFFT_COMPLEX128, c_int64_t))
    call add('SFFT_BACKEND_AUTO', int(SFFT_BACKEND_AUTO, c_int64_t))
    call add('SFFT_BACKEND_CPU', int(SFFT_BACKEND_CPU, c_int64_t))
    call add('SFFT_BACKEND_CUDA', int(SFFT_BACKEND_CUDA, c_int64_t))
    call add('SFFT_FAMILY_SHIFT', int(SFFT_FAMILY_SHIFT, c_int64_t))
    call add('SFFT_FAMILY_SPARSE', int(SFFT_FAMILY_SPARSE, c_int64_t))
    call add('SFFT_FAMILY_NUFFT3', int(SFFT_FAMILY_NUFFT3, c_int64_t))
    call add('SFFT_FAMILY_SPFFT2D', int(SFFT_FAMILY_SPFFT2D, c_int64_t))
    call add('NUFFT3_KERNEL_ES', int(NUFFT3_KERNEL_ES, c_int64_t))
    call add('NUFFT3_KERNEL_GAUSSIAN', int(NUFFT3_KERNEL_GAUSSIAN, c_int64_t))
    call add('NUFFT3_KERNEL_PSWF', int(NUFFT3_KERNEL_PSWF, c_int64_t))
    call add('SPFFT2D_METHOD_AUTO', int(SPFFT2D_METHOD_AUTO, c_int64_t))
    call add('SPFFT2D_METHOD_DIRECT', int(SPFFT2D_METHOD_DIRECT, c_int64_t))
    call add('SPFFT2D_METHOD_DIRECT_ROWS', int(SPFFT2D_METHOD_DIRECT_ROWS, c_int64_t))
    call add('SPFFT2D_METHOD_DENSE', int(SPFFT2D_METHOD_DENSE, c_int64_t))
    call add('SPFFT2D_METHOD_PRUNED', int(SPFFT2D_METHOD_PRUNED, c_int64_t))
    call add('SFFT_SPARSE_AUTO', int(SFFT_SPARSE_AUTO, c_int64_t))
    call add('SFFT_SPARSE_ROBUST', int(SFFT_SPARSE_ROBUST, c_int64_t))
    call add('SFFT_SPARSE_EXACT', int(SFFT_SPARSE_EXACT, c_int64_t))
    call add('SFFT_VERSION_MAJOR', int(SFFT_VERSION_MAJOR, c_int64_t))
    call add('SFFT_VERSION_MINOR', int(SFFT_VERSION_MINOR, c_int64_t))
    call add('SFFT_VERSION_PATCH', int(SFFT_VERSION_PATCH, c_int64_t))
    call add('SFFT_VERSION_NUMBER', int(SFFT_VERSION_NUMBER, c_int64_t))
    call check(sfft_test_c_facts(c_side, size(c_side, kind=c_int)) == count, 'the C and Fortran fact lists have one length')
    do i = 1, count
      call check(c_side(i) == f_side(i), 'layout/constant ' // trim(names(i)) // ' as in C')
    end do
    print '(a, i0, a)', 'layout: ', count, ' struct sizes, field offsets and constants compared with the C header'
  end subroutine

  subroutine test_common()
    type(sfft_build_info) :: info
    type(sfft_options) :: opts
    type(nufft3_options) :: nopts
    type(sfft_sparse_options) :: knobs
    character(len=32) :: expected
    call check(sfft_version() == SFFT_VERSION_NUMBER, 'sfft_version() == SFFT_VERSION_NUMBER')
    write (expected, '(i0, ".", i0, ".", i0)') SFFT_VERSION_MAJOR, SFFT_VERSION_MINOR, SFFT_VERSION_PATCH
    call check(sfft_string(sfft_version_string()) == trim(expected), 'sfft_version_string() is ' // trim(expected))
    call check(index(sfft_string(sfft_status_string(SFFT_ERROR_NO_DEVICE)), 'SFFT_ERROR_NO_DEVICE') == 1, &
               'sfft_status_string names the code')
    call check(sfft_get_build_info(info, c_sizeof(info)) == SFFT_SUCCESS, 'sfft_get_build_info succeeds')
    call check(info%version == SFFT_VERSION_NUMBER, 'build_info%version')
    call check(info%families == ior(ior(SFFT_FAMILY_SHIFT, SFFT_FAMILY_SPARSE), ior(SFFT_FAMILY_NUFFT3, SFFT_FAMILY_SPFFT2D)), &
               'build_info%families has every family')
    call check(index(sfft_string(info%fft_library), 'fftw-') == 1, 'build_info%fft_library names FFTW')
    call check(info%cuda_device_count == sfft_cuda_device_count(), 'build_info%cuda_device_count')
    call check(sfft_get_build_info(info, 8_c_size_t) == SFFT_ERROR_INVALID_ARGUMENT, 'a struct_size of 8 is refused')
    call check(len(sfft_last_error_string()) > 0, 'sfft_last_error_string() explains the refusal')
    call sfft_options_init(opts)
    call check(opts%struct_size == c_sizeof(opts) .and. opts%backend == SFFT_BACKEND_AUTO .and. opts%threads == 0, &
               'sfft_options_init fills defaults and this struct''s size')
    call nufft3_options_init(nopts)
    call check(nopts%struct_size == c_sizeof(nopts) .and. nopts%ntransf == 1 .and. nopts%kernel == NUFFT3_KERNEL_ES, &
               'nufft3_options_init')
    call sfft_sparse_options_init(knobs)
    call check(knobs%struct_size == c_sizeof(knobs) .and. knobs%variant == SFFT_SPARSE_AUTO .and. knobs%comb_keep == 0, &
               'sfft_sparse_options_init')
    print '(5a)', 'common: version ', sfft_string(sfft_version_string()), ', FFT library ', &
      sfft_string(info%fft_library), ', status strings, last error and option inits checked'
  end subroutine

  subroutine test_shift()
    complex(c_double_complex), target :: x(5, 7), y(5, 7), z(5, 7)
    real(c_float), target :: r(5, 7), rs(5, 7)
    type(sfft_options) :: opts
    integer(c_int64_t) :: shape(2)
    integer :: i, j
    logical :: ok
    do j = 1, 7
      do i = 1, 5
        x(i, j) = cmplx(i, 10 * j, kind=c_double_complex)
        r(i, j) = real(100 * i + j, c_float)
      end do
    end do
    call sfft_options_init(opts)
    opts%backend = SFFT_BACKEND_CPU
    ! Fortran is column-major: x(5, 7) is the C-order array of shape {7, 5}.
    shape = [7_c_int64_t, 5_c_int64_t]
    call check(fftshift_nd(c_loc(y), c_loc(x), 2_c_int, shape, 0_c_int32_t, SFFT_COMPLEX128, opts) == SFFT_SUCCESS, &
               'fftshift_nd complex128')
    ok = .true.
    do j = 1, 7
      do i = 1, 5
        ok = ok .and. y(mod(i - 1 + 2, 5) + 1, mod(j - 1 + 3, 7) + 1) == x(i, j)  ! n/2: 5/2 = 2, 7/2 = 3
      end do
    end do
    call check(ok, 'fftshift_nd moves element i to (i + n/2) mod n along both axes')
    call check(ifftshift_nd(c_loc(z), c_loc(y), 2_c_int, shape, 0_c_int32_t, SFFT_COMPLEX128) == SFFT_SUCCESS, &
               'ifftshift_nd without options')
    call check(all(z == x), 'ifftshift_nd(fftshift_nd(x)) == x')
    ! axes_mask bit 0 is C dim 0, Fortran's last dimension.
    call check(fftshift_nd(c_loc(rs), c_loc(r), 2_c_int, shape, 1_c_int32_t, SFFT_FLOAT32, opts) == SFFT_SUCCESS, &
               'fftshift_nd float32, one axis')
    ok = .true.
    do j = 1, 7
      ok = ok .and. all(rs(:, mod(j - 1 + 3, 7) + 1) == r(:, j))
    end do
    call check(ok, 'axes_mask 1 shifts Fortran dimension 2 only')
    call check(fftshift_nd(c_loc(y), c_loc(x), 9_c_int, shape, 0_c_int32_t, SFFT_COMPLEX128) == &
               SFFT_ERROR_INVALID_ARGUMENT, 'ndim 9 is refused')
    call check(index(sfft_last_error_string(), 'ndim') > 0, 'sfft_last_error_string() names ndim: ' // &
               sfft_last_error_string())
    print '(a)', 'shift: fftshift_nd/ifftshift_nd of 5x7 complex128 and float32 arrays match the index rule'
  end subroutine

  subroutine test_nufft3()
    integer, parameter :: n = 40, k = 30, ntransf = 2
    real(c_double), parameter :: tol = 1e-9_c_double
    real(c_double), target :: x(n), y(n), s(k), t(k)
    complex(c_double_complex), target :: f(n, ntransf), fk(k, ntransf)
    complex(c_double_complex) :: exact(k, ntransf)
    type(nufft3_options) :: nopts
    type(c_ptr) :: plan
    integer :: i, j, m
    real(c_double) :: err, bound
    do i = 1, n
      x(i) = 3 * sin(1.3_c_double * i)
      y(i) = 2 * cos(0.7_c_double * i)
      f(i, 1) = cmplx(cos(0.4_c_double * i), sin(0.9_c_double * i), c_double_complex)
      f(i, 2) = cmplx(1, -0.1_c_double * i, c_double_complex)
    end do
    do j = 1, k
      s(j) = 5 * sin(2.1_c_double * j)
      t(j) = 4 * cos(1.7_c_double * j)
    end do
    call check(nufft3_create(plan, 2_c_int, SFFT_COMPLEX128, 1_c_int, tol) == SFFT_SUCCESS, 'nufft3_create')
    call nufft3_options_init(nopts)
    nopts%ntransf = ntransf
    call check(nufft3_set_options(plan, nopts) == SFFT_SUCCESS, 'nufft3_set_options ntransf 2')
    call check(nufft3_setpts(plan, int(n, c_int64_t), c_loc(x), c_loc(y), c_null_ptr, int(k, c_int64_t), c_loc(s), &
                             c_loc(t), c_null_ptr) == SFFT_SUCCESS, 'nufft3_setpts')
    call check(nufft3_exec(plan, c_loc(f), c_loc(fk)) == SFFT_SUCCESS, 'nufft3_exec')
    do m = 1, ntransf
      do j = 1, k
        exact(j, m) = sum(f(:, m) * exp(cmplx(0, x * s(j) + y * t(j), c_double_complex)))
      end do
      err = sqrt(sum(abs(fk(:, m) - exact(:, m))**2))
      bound = 10 * tol * max(sqrt(sum(abs(exact(:, m))**2)), sqrt(real(k, c_double)) * sum(abs(f(:, m))) / 2)
      call check(err <= bound, 'nufft3 matches the direct sum within the stated bound')
      print '(a, i0, a, es9.2, a, es9.2)', 'nufft3: 2-D, 40 sources, 30 targets, vector ', m, &
        ': l2 error vs direct sum ', err, ' <= ', bound
    end do
    call check(nufft3_setpts(plan, 1_c_int64_t, c_loc(x), c_null_ptr, c_null_ptr, 1_c_int64_t, c_loc(s), c_loc(t), &
                             c_null_ptr) == SFFT_ERROR_INVALID_ARGUMENT, 'nufft3_setpts refuses a NULL y in 2-D')
    call check(nufft3_destroy(plan) == SFFT_SUCCESS, 'nufft3_destroy')
    call check(nufft3_destroy(plan) == SFFT_ERROR_INVALID_ARGUMENT, 'a destroyed nufft3 plan is refused')
  end subroutine

  subroutine test_spfft2d()
    integer, parameter :: nnz = 5
    integer(c_int64_t), target :: row_idx(nnz) = [0, 1, 1, 4, 5], col_idx(nnz) = [0, 3, 7, 2, 5]
    real(c_double), target :: values(nnz) = [1.0_c_double, -2.0_c_double, 0.5_c_double, 3.0_c_double, 1.25_c_double]
    ! The half spectrum rows x (cols/2 + 1), C-order: Fortran spectrum(v, u).
    complex(c_double_complex), target :: whole(spec_half, spec_rows), two_rows(spec_half, 2), streamed(spec_half, spec_rows)
    complex(c_double_complex), target :: from_file(spec_half, spec_rows)
    complex(c_double_complex) :: exact(spec_half, spec_rows)
    type(c_ptr) :: plan, file_plan
    type(sfft_options) :: opts
    integer(c_int64_t) :: rows, cols, stored, tile_rows, workspace
    integer(c_int) :: backend, method
    character(len=*), parameter :: path = 'fortran_api_test.mtx'
    integer :: e, u, v, unit
    real(c_double) :: err
    exact = 0
    do u = 0, spec_rows - 1
      do v = 0, spec_half - 1
        do e = 1, nnz
          exact(v + 1, u + 1) = exact(v + 1, u + 1) + values(e) * exp(cmplx(0, -2 * pi * &
            (real(row_idx(e) * u, c_double) / spec_rows + real(col_idx(e) * v, c_double) / spec_cols), c_double_complex))
        end do
      end do
    end do
    call sfft_options_init(opts)
    opts%backend = SFFT_BACKEND_CPU
    call check(spfft2d_create(plan, int(spec_rows, c_int64_t), int(spec_cols, c_int64_t), int(nnz, c_int64_t), &
                              c_loc(row_idx), c_loc(col_idx), c_loc(values), SFFT_COMPLEX128, opts) == SFFT_SUCCESS, &
               'spfft2d_create')
    call check(spfft2d_set_method(plan, SPFFT2D_METHOD_DIRECT) == SFFT_SUCCESS, 'spfft2d_set_method DIRECT')
    call check(spfft2d_get_method(plan, method) == SFFT_SUCCESS .and. method == SPFFT2D_METHOD_DIRECT, &
               'spfft2d_get_method')
    call check(spfft2d_set_tile_rows(plan, 2_c_int64_t) == SFFT_SUCCESS, 'spfft2d_set_tile_rows')
    call check(spfft2d_get_info(plan, rows=rows, cols=cols, nnz=stored, tile_rows=tile_rows, &
                                workspace_bytes=workspace, backend=backend) == SFFT_SUCCESS, 'spfft2d_get_info')
    call check(rows == spec_rows .and. cols == spec_cols .and. stored == nnz .and. tile_rows == 2 .and. &
               backend == SFFT_BACKEND_CPU, 'spfft2d_get_info facts')
    call check(spfft2d_get_info(plan, nnz=stored) == SFFT_SUCCESS .and. stored == nnz, &
               'spfft2d_get_info with outputs left out')
    call check(spfft2d_exec(plan, c_loc(whole)) == SFFT_SUCCESS, 'spfft2d_exec')
    err = maxval(abs(whole - exact))
    call check(err <= 1e-12_c_double * sum(abs(values)), 'spfft2d_exec matches the direct 2-D DFT')
    call check(spfft2d_exec_rows(plan, 3_c_int64_t, 2_c_int64_t, c_loc(two_rows)) == SFFT_SUCCESS, 'spfft2d_exec_rows')
    call check(all(two_rows == whole(:, 4:5)), 'spfft2d_exec_rows rows 3..4 are those of spfft2d_exec')
    call check(spfft2d_exec_stream(plan, c_funloc(collect_rows), c_loc(streamed)) == SFFT_SUCCESS, 'spfft2d_exec_stream')
    call check(all(deliveries == 1) .and. all(streamed == whole), 'spfft2d_exec_stream delivers every row once, as exec')
    call check(spfft2d_destroy(plan) == SFFT_SUCCESS, 'spfft2d_destroy')

    open (newunit=unit, file=path, status='replace', action='write')
    write (unit, '(a)') '%%MatrixMarket matrix coordinate real general'
    write (unit, '(3i4)') spec_rows, spec_cols, nnz
    do e = 1, nnz
      write (unit, '(2i4, es24.16)') row_idx(e) + 1, col_idx(e) + 1, values(e)
    end do
    close (unit)
    call check(spfft2d_create_from_mtx(file_plan, path, 0_c_int, SFFT_COMPLEX128, opts) == SFFT_SUCCESS, &
               'spfft2d_create_from_mtx')
    call check(spfft2d_exec(file_plan, c_loc(from_file)) == SFFT_SUCCESS, 'spfft2d_exec of the file''s plan')
    call check(maxval(abs(from_file - exact)) <= 1e-12_c_double * sum(abs(values)), 'the .mtx plan gives the same spectrum')
    call check(spfft2d_destroy(file_plan) == SFFT_SUCCESS, 'spfft2d_destroy of the file''s plan')
    open (newunit=unit, file=path, status='old')
    close (unit, status='delete')
    call check(spfft2d_create_from_mtx(file_plan, path, 0_c_int, SFFT_COMPLEX128) == SFFT_ERROR_INVALID_ARGUMENT, &
               'spfft2d_create_from_mtx refuses a missing file')
    call check(index(sfft_last_error_string(), path) > 0, 'the error names the file: ' // sfft_last_error_string())
    print '(a, es9.2)', 'spfft2d: 6x8 matrix, 5 nonzeros: exec, exec_rows, exec_stream, from .mtx; max error ', err
  end subroutine

  subroutine test_sparse()
    integer, parameter :: n = 1024, k = 4
    integer(c_int64_t), parameter :: tones(k) = [3, 100, 517, 1000]
    complex(c_double_complex), parameter :: amplitudes(k) = [(1.0_c_double, 0.5_c_double), (-2.0_c_double, 0.0_c_double), &
                                                             (0.0_c_double, 3.0_c_double), (0.25_c_double, -1.5_c_double)]
    complex(c_double_complex), target :: x(n), found(k), xs(n, 3), founds(k, 3)
    integer(c_int64_t), target :: freqs(k), batch_freqs(k, 3)
    integer(c_int64_t) :: count, counts(3)
    type(sfft_options) :: opts
    type(sfft_sparse_options) :: knobs
    type(sfft_report) :: report
    type(c_ptr) :: plan
    integer :: i, j, variant
    logical :: ok
    ! x[t] = sum_j a_j exp(2 pi i f_j t / n) has X[f_j] = n a_j and nothing else.
    do i = 0, n - 1
      x(i + 1) = sum(amplitudes * exp(cmplx(0, 2 * pi * real(mod(tones * i, int(n, c_int64_t)), c_double) / n, &
                                             c_double_complex)))
    end do
    call sfft_options_init(opts)
    opts%backend = SFFT_BACKEND_CPU
    opts%seed = 7
    do variant = 1, 2
      if (variant == 1) then
        call check(sfft_create(plan, int(n, c_int64_t), int(k, c_int64_t), SFFT_COMPLEX128, opts) == SFFT_SUCCESS, &
                   'sfft_create')
      else
        call sfft_sparse_options_init(knobs)
        knobs%variant = SFFT_SPARSE_ROBUST
        call check(sfft_create_ex(plan, int(n, c_int64_t), int(k, c_int64_t), SFFT_COMPLEX128, opts, knobs) == &
                   SFFT_SUCCESS, 'sfft_create_ex ROBUST')
      end if
      count = k
      call check(sfft_exec(plan, c_loc(x), c_loc(freqs), c_loc(found), count) == SFFT_SUCCESS, 'sfft_exec')
      ok = count == k
      do j = 1, k
        ok = ok .and. any(freqs(:count) == tones(j))
        do i = 1, int(count)
          if (freqs(i) == tones(j)) ok = ok .and. abs(found(i) - n * amplitudes(j)) <= 1e-6_c_double * n * abs(amplitudes(j))
        end do
      end do
      call check(ok, 'the sparse FFT finds the 4 tones with X[f] = n a')
      count = 1
      call check(sfft_exec(plan, c_loc(x), c_loc(freqs), c_loc(found), count) == SFFT_ERROR_INVALID_ARGUMENT .and. &
                 count == k, 'a capacity of 1 is refused with the count needed')
      ! A batch of three columns (x, 2x and zeros), outputs k apart: the tones of each, scaled, and none in
      ! the empty one; then a capacity of 1 for column 2 is refused, naming signal 1, with every count set.
      xs(:, 1) = x
      xs(:, 2) = 2 * x
      xs(:, 3) = 0
      counts = k
      call check(sfft_exec_batch(plan, 3_c_int64_t, c_loc(xs), int(n, c_int64_t), c_loc(batch_freqs), c_loc(founds), &
                                 int(k, c_int64_t), counts) == SFFT_SUCCESS, 'sfft_exec_batch')
      ok = all(counts == [int(k, c_int64_t), int(k, c_int64_t), 0_c_int64_t])
      do j = 1, k
        do i = 1, 2
          ok = ok .and. any(batch_freqs(:, i) == tones(j))
          do count = 1, k
            if (batch_freqs(count, i) == tones(j)) ok = ok .and. &
              abs(founds(count, i) - i * n * amplitudes(j)) <= 1e-6_c_double * i * n * abs(amplitudes(j))
          end do
        end do
      end do
      call check(ok, 'sfft_exec_batch finds the tones of each signal (X[f] = n a, 2 n a) and none in the empty one')
      ! The report of each signal: the clean ones explained; a signal beyond the batch refused.
      report%struct_size = c_sizeof(report)
      do i = 1, 2
        ok = sfft_get_report(plan, int(i - 1, c_int64_t), report) == SFFT_SUCCESS
        call check(ok .and. report%count == k .and. report%unexplained == 0, 'sfft_get_report: signal explained')
      end do
      call check(sfft_get_report(plan, 3_c_int64_t, report) == SFFT_ERROR_INVALID_ARGUMENT, &
                 'sfft_get_report: a signal beyond the batch is refused')
      counts = [int(k, c_int64_t), 1_c_int64_t, int(k, c_int64_t)]
      ! Separate statements: Fortran does not order the operands of .and. (the message is read after the call).
      ok = sfft_exec_batch(plan, 3_c_int64_t, c_loc(xs), int(n, c_int64_t), c_loc(batch_freqs), c_loc(founds), &
                           int(k, c_int64_t), counts) == SFFT_ERROR_INVALID_ARGUMENT
      ok = ok .and. all(counts == [int(k, c_int64_t), int(k, c_int64_t), 0_c_int64_t])
      call check(ok .and. index(sfft_last_error_string(), 'signal 1') > 0, &
                 'sfft_exec_batch: a capacity of 1 for signal 1 is refused by name, every count set: ' // &
                 sfft_last_error_string())
      call check(sfft_destroy(plan) == SFFT_SUCCESS, 'sfft_destroy')
    end do
    call check(sfft_destroy(c_null_ptr) == SFFT_SUCCESS, 'sfft_destroy(NULL) is a no-op')
    print '(a)', 'sparse: n = 1024, k = 4 tones found with their values by sfft_create and sfft_create_ex (ROBUST), ' // &
      'and by sfft_exec_batch on 3 signals'
  end subroutine
end program api_test

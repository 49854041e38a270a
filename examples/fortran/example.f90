! SPDX-License-Identifier: Apache-2.0
! Every sfft family from Fortran through the `sfft` module. Arrays are passed as c_loc(array) (hence the target
! attribute); sfft sees C-order arrays, so a Fortran array a(n1, n2) has the C shape {n2, n1}. Each result is
! checked against a direct computation; the program stops with a non-zero code on a wrong one.
program sfft_fortran_example
  use, intrinsic :: iso_c_binding
  use sfft
  implicit none
  real(c_double), parameter :: pi = acos(-1.0_c_double)
  integer :: failures = 0

  print '(2a)', 'sfft ', sfft_string(sfft_version_string())
  call shift_example()
  call nufft3_example()
  call spfft2d_example()
  call sparse_fft_example()
  if (failures /= 0) error stop 1

contains

  ! Stops with the library's explanation when a call fails.
  subroutine ok(status, what)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= SFFT_SUCCESS) then
      print '(4a)', what, ' failed: ', sfft_last_error_string()
      error stop 2
    end if
  end subroutine

  subroutine report(family, good, detail)
    character(len=*), intent(in) :: family, detail
    logical, intent(in) :: good
    if (.not. good) failures = failures + 1
    print '(4a)', family, ': ', detail, trim(merge(': ok   ', ': WRONG', good))
  end subroutine

  subroutine shift_example()
    complex(c_double_complex), target :: a(4, 6), b(4, 6)
    integer :: i, j
    do j = 1, 6
      do i = 1, 4
        a(i, j) = cmplx(i, j, c_double_complex)
      end do
    end do
    ! All axes (mask 0), default options (the optional opts argument left out).
    call ok(fftshift_nd(c_loc(b), c_loc(a), 2, [6_c_int64_t, 4_c_int64_t], 0_c_int32_t, SFFT_COMPLEX128), 'fftshift_nd')
    ! fftshift moves element i to (i + n/2) mod n along each axis: a(1,1) lands at b(3,4).
    call report('shift', b(3, 4) == a(1, 1) .and. all(cshift(cshift(a, -2, 1), -3, 2) == b), &
                'fftshift_nd of a 4x6 array equals cshift by half of each extent')
  end subroutine

  subroutine nufft3_example()
    integer, parameter :: n = 200, k = 100
    real(c_double), parameter :: tol = 1e-8_c_double
    real(c_double), target :: x(n), s(k)
    complex(c_double_complex), target :: f(n), big_f(k)
    complex(c_double_complex) :: exact(k)
    type(c_ptr) :: plan
    integer :: i, j
    real(c_double) :: rel
    x = [(7 * sin(1.3_c_double * i), i = 1, n)]
    s = [(30 * cos(0.7_c_double * j), j = 1, k)]
    f = [(cmplx(cos(0.1_c_double * i), 1, c_double_complex), i = 1, n)]
    ! 1-D, sign +1: F(j) = sum_i f(i) exp(+i x(i) s(j)). Unused dimensions get c_null_ptr.
    call ok(nufft3_create(plan, 1, SFFT_COMPLEX128, 1, tol), 'nufft3_create')
    call ok(nufft3_setpts(plan, int(n, c_int64_t), c_loc(x), c_null_ptr, c_null_ptr, int(k, c_int64_t), c_loc(s), &
                          c_null_ptr, c_null_ptr), 'nufft3_setpts')
    call ok(nufft3_exec(plan, c_loc(f), c_loc(big_f)), 'nufft3_exec')
    call ok(nufft3_destroy(plan), 'nufft3_destroy')
    do j = 1, k
      exact(j) = sum(f * exp(cmplx(0, x * s(j), c_double_complex)))
    end do
    rel = sqrt(sum(abs(big_f - exact)**2) / sum(abs(exact)**2))
    call report('nufft3', rel <= 10 * tol, 'relative l2 error vs the direct sum below 10 tol')
  end subroutine

  subroutine spfft2d_example()
    integer, parameter :: rows = 16, cols = 12, half = cols / 2 + 1, nnz = 3
    ! 0-based coordinates (row, col) of the nonzeros.
    integer(c_int64_t), target :: r(nnz) = [0, 3, 15], c(nnz) = [0, 5, 11]
    ! The rows x (cols/2 + 1) half spectrum, C-order: y(v, u) holds Y[u][v].
    complex(c_double_complex), target :: y(half, rows)
    type(c_ptr) :: plan
    integer :: u, v
    real(c_double) :: worst
    ! values = c_null_ptr: a 0/1 pattern.
    call ok(spfft2d_create(plan, int(rows, c_int64_t), int(cols, c_int64_t), int(nnz, c_int64_t), c_loc(r), c_loc(c), &
                           c_null_ptr, SFFT_COMPLEX128), 'spfft2d_create')
    call ok(spfft2d_exec(plan, c_loc(y)), 'spfft2d_exec')
    call ok(spfft2d_destroy(plan), 'spfft2d_destroy')
    worst = 0
    do u = 0, rows - 1
      do v = 0, half - 1
        worst = max(worst, abs(y(v + 1, u + 1) - sum(exp(cmplx(0, -2 * pi * &
          (real(r * u, c_double) / rows + real(c * v, c_double) / cols), c_double_complex)))))
      end do
    end do
    call report('spfft2d', worst <= 1e-12_c_double, 'half spectrum of a 16x12 pattern equals the direct 2-D DFT')
  end subroutine

  subroutine sparse_fft_example()
    integer, parameter :: n = 4096, k = 2
    complex(c_double_complex), target :: x(n), values(k)
    integer(c_int64_t), target :: freqs(k)
    integer(c_int64_t) :: count
    type(sfft_options) :: opts
    type(c_ptr) :: plan
    integer :: t
    ! Two tones: X[10] = 2n and X[3000] = -n i.
    x = [(2 * exp(cmplx(0, 2 * pi * mod(10 * t, n) / n, c_double_complex)) - &
          cmplx(0, 1, c_double_complex) * exp(cmplx(0, 2 * pi * mod(3000 * t, n) / n, c_double_complex)), t = 0, n - 1)]
    call sfft_options_init(opts)  ! defaults, then change what you need
    opts%seed = 1
    call ok(sfft_create(plan, int(n, c_int64_t), int(k, c_int64_t), SFFT_COMPLEX128, opts), 'sfft_create')
    count = k  ! capacity in, coefficients found out
    call ok(sfft_exec(plan, c_loc(x), c_loc(freqs), c_loc(values), count), 'sfft_exec')
    call ok(sfft_destroy(plan), 'sfft_destroy')
    ! Ordered by decreasing magnitude.
    call report('sparse FFT', count == 2 .and. freqs(1) == 10 .and. freqs(2) == 3000 .and. &
                abs(values(1) - 2 * n) < 1e-6_c_double * n .and. &
                abs(values(2) + cmplx(0, n, c_double_complex)) < 1e-6_c_double * n, &
                'n = 4096, k = 2: frequencies 10 and 3000 with their values')
  end subroutine
end program sfft_fortran_example

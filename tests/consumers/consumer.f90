! SPDX-License-Identifier: Apache-2.0
! A Fortran user of the installed library that compiles the installed module source (include/sfft/sfft.f90) with
! its own compiler: ifftshift(fftshift(x)) == x.
program consumer
  use, intrinsic :: iso_c_binding
  use sfft
  implicit none
  complex(c_double_complex), target :: x(5, 7), y(5, 7), z(5, 7)
  integer(c_int64_t) :: shape(2)
  integer :: i, j
  do j = 1, 7
    do i = 1, 5
      x(i, j) = cmplx(i, j, kind=c_double_complex)
    end do
  end do
  ! Fortran is column-major: the C-order shape of x(5,7) is (7, 5).
  shape = [7_c_int64_t, 5_c_int64_t]
  if (fftshift_nd(c_loc(y), c_loc(x), 2_c_int, shape, 0_c_int32_t, SFFT_COMPLEX128) /= SFFT_SUCCESS) then
    print '(a)', sfft_last_error_string()
    stop 1
  end if
  ! numpy rule along the fast axis (extent 5): element 1 moves to 1 + 5/2 = 3.
  if (y(3, 4) /= x(1, 1)) stop 2
  if (ifftshift_nd(c_loc(z), c_loc(y), 2_c_int, shape, 0_c_int32_t, SFFT_COMPLEX128) /= SFFT_SUCCESS) stop 3
  if (any(z /= x)) stop 4
  print '(2a)', 'Fortran consumer OK, sfft ', sfft_string(sfft_version_string())
end program consumer

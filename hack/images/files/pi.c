/* pi: computes pi by the midpoint rule over n intervals split across the
 * ranks, and prints it with the hosts the ranks ran on. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank, size, len;
  char host[MPI_MAX_PROCESSOR_NAME];
  long n = argc > 1 ? atol(argv[1]) : 100000000L;
  double h, sum = 0, pi = 0;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Get_processor_name(host, &len);
  printf("rank %d of %d on %s\n", rank, size, host);
  fflush(stdout);

  h = 1.0 / (double)n;
  for (long i = rank; i < n; i += size) {
    double x = h * ((double)i + 0.5);
    sum += 4.0 / (1.0 + x * x);
  }
  sum *= h;
  MPI_Reduce(&sum, &pi, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("pi is approximately %.12f\n", pi);
  }
  MPI_Finalize();
  return 0;
}
